#pragma once
// NEW in lesson 19: one rank's timeline of a layer, from CUPTI's activity records: when each
// kernel (on the SMs) and each copy (on the copy engines) started and ended on this rank's GPU.
// It shows what the end-to-end times cannot: whether the copies run while the GEMMs do.
// (Lesson 17's chain_timeline reads the same records for one GPU.)

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cupti.h>

#include "common/cuda_check.hpp"

namespace lesson19 {

// One interval of the timeline, in a fixed size so that ranks can exchange them as bytes.
struct Span {
  uint64_t start_ns = 0, end_ns = 0;
  bool on_copy_engine = false;  // a copy; otherwise a kernel
  char what[48] = {};           // the kernel's name, or the copy's size
};

class ActivityTimeline {
 public:
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
  std::vector<Span> spans() {
    check(cuptiActivityFlushAll(1), "cuptiActivityFlushAll");
    std::vector<Span> sorted = records();
    std::sort(sorted.begin(), sorted.end(),
              [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; });
    return sorted;
  }

 private:
  static constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                  CUPTI_ACTIVITY_KIND_MEMCPY,
                                                  CUPTI_ACTIVITY_KIND_MEMCPY2};

  static std::vector<Span>& records() {
    static std::vector<Span> spans;
    return spans;
  }

  static void check(CUptiResult result, const char* call) {
    if (result == CUPTI_SUCCESS) return;
    const char* text = nullptr;
    cuptiGetResultString(result, &text);
    gemm::throw_cuda_error(call, text ? text : "CUPTI error", __FILE__, __LINE__);
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
      Span span;
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        span = {kernel->start, kernel->end, false, {}};
        std::snprintf(span.what, sizeof(span.what), "%s", kernel_label(kernel->name));
      } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        span = {copy->start, copy->end, true, {}};
        std::snprintf(span.what, sizeof(span.what), "copy %.1f MB", copy->bytes / 1e6);
      } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
        const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
        span = {copy->start, copy->end, true, {}};
        std::snprintf(span.what, sizeof(span.what), "copy %.1f MB, GPU %u -> GPU %u",
                      copy->bytes / 1e6, copy->srcDeviceId, copy->dstDeviceId);
      } else {
        continue;
      }
      records().push_back(span);
    }
    std::free(buffer);
  }

  // A short name for the kernels of a layer: lesson 16's GEMMs run lesson 15's kernel.
  static const char* kernel_label(const char* name) {
    if (name == nullptr) return "kernel";
    if (std::strstr(name, "gemm_kernel")) return "GEMM";
    if (std::strstr(name, "nccl")) return "NCCL";
    if (std::strstr(name, "sum_slots")) return "sum of the slots";
    return "other kernel";
  }
};

}  // namespace lesson19
