#pragma once
// A timeline from CUPTI's activity records: when each kernel (on the SMs), each copy (on the
// copy engines) and each memset (the timing protocol's L2 flush) of this process started and ended
// on the GPU. It shows what end-to-end times
// cannot: whether two kernels overlap (lesson 17's chain_timeline), or whether copies run while
// GEMMs do (lesson 19's --timeline). Only programs linked with CUDA::cupti include it.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cupti.h>

#include "common/cuda_check.hpp"

namespace gemm {

// One interval of the timeline.
struct ActivitySpan {
  uint64_t start_ns = 0, end_ns = 0;
  bool on_copy_engine = false;  // a copy; otherwise a kernel or a memset
  // The kernel's name, the copy's size (and GPUs), or a memset's ActivityTimeline::kMemsetName.
  std::string what;
};

class ActivityTimeline {
 public:
  // What a memset's span is called (the timing protocol's L2 flush is one).
  static constexpr const char* kMemsetName = "memset";

  // Starts recording every kernel and copy of this process.
  ActivityTimeline() {
    records().clear();
    check(cuptiActivityRegisterCallbacks(&buffer_requested, &buffer_completed),
          "cuptiActivityRegisterCallbacks");
    for (const CUpti_ActivityKind kind : kKinds) check(cuptiActivityEnable(kind), "cuptiActivityEnable");
  }
  ~ActivityTimeline() {
    for (const CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
  }
  ActivityTimeline(const ActivityTimeline&) = delete;
  ActivityTimeline& operator=(const ActivityTimeline&) = delete;

  // Forgets what was recorded so far (the work must have finished: synchronize first).
  void clear() {
    check(cuptiActivityFlushAll(1), "cuptiActivityFlushAll");
    records().clear();
  }

  // What was recorded so far (the work must have finished: synchronize first), in start order.
  std::vector<ActivitySpan> spans() {
    check(cuptiActivityFlushAll(1), "cuptiActivityFlushAll");
    std::vector<ActivitySpan> sorted = records();
    std::sort(sorted.begin(), sorted.end(),
              [](const ActivitySpan& a, const ActivitySpan& b) { return a.start_ns < b.start_ns; });
    return sorted;
  }

 private:
  static constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                  CUPTI_ACTIVITY_KIND_MEMCPY,
                                                  CUPTI_ACTIVITY_KIND_MEMCPY2,
                                                  CUPTI_ACTIVITY_KIND_MEMSET};

  static std::vector<ActivitySpan>& records() {
    static std::vector<ActivitySpan> spans;
    return spans;
  }

  static void check(CUptiResult result, const char* call) {
    if (result == CUPTI_SUCCESS) return;
    const char* text = nullptr;
    cuptiGetResultString(result, &text);
    throw_cuda_error(call, text ? text : "CUPTI error", __FILE__, __LINE__);
  }

  static void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *size = size_t(1) << 20;
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
    *max_records = 0;
  }

  static void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t,
                                        size_t valid) {
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      char what[64];
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        records().push_back({kernel->start, kernel->end, false, kernel->name ? kernel->name : "?"});
      } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        std::snprintf(what, sizeof(what), "copy %.1f MB", copy->bytes / 1e6);
        records().push_back({copy->start, copy->end, true, what});
      } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
        const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
        std::snprintf(what, sizeof(what), "copy %.1f MB, GPU %u -> GPU %u", copy->bytes / 1e6,
                      copy->srcDeviceId, copy->dstDeviceId);
        records().push_back({copy->start, copy->end, true, what});
      } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
        const auto* memset = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        records().push_back({memset->start, memset->end, false, kMemsetName});
      }
    }
    std::free(buffer);
  }
};

}  // namespace gemm
