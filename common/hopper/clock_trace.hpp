#pragma once
/// The final kernel's trace that writes the global timer (common/hopper/trace.hpp says when): one
/// row of TraceSlots::kCount stamps per block, in a table of this translation unit's device memory
/// (read with clock_trace_table()). A stamp left 0 is an event that did not happen. Only
/// profiles/role_timeline.cu includes it: the course's kernels record nothing.

#include <cstdint>
#include <type_traits>

#include "common/hopper/trace.hpp"
#include "common/cuda_check.hpp"
#include "common/hopper/epilogue_kind.hpp"
#include "common/ptx/timer.hpp"

namespace gemm::hopper {

inline constexpr int kMostTracedBlocks = 1024;

#if defined(__CUDACC__)
static __device__ uint64_t g_clock_trace[kMostTracedBlocks][TraceSlots::kCount];

struct ClockTrace {
  template <class Kind>
  static constexpr bool kCompiledWith = std::is_same_v<Kind, PlainEpilogue>;
  __device__ static void stamp(int slot) {
    if (blockIdx.x < kMostTracedBlocks) g_clock_trace[blockIdx.x][slot] = ptx::global_timer_ns();
  }
  // Called by the producer's thread 0 alone.
  __device__ static void producer(ProducerEvent event) { stamp(TraceSlots::producer(event)); }
  // Called by the producer's thread 0 alone, first thing: every value of the schedule read from
  // the kernel's parameters (the empty asm takes them all, so each read must have completed).
  template <class Schedule>
  __device__ static void parameters_read(const Schedule& schedule) {
    asm volatile("" ::"l"(schedule.plan.tiles), "l"(schedule.plan.workers),
                 "l"(schedule.plan.k_iterations), "l"(schedule.plan.sk_tiles),
                 "l"(schedule.plan.share), "l"(schedule.plan.longer), "r"(schedule.cluster_rows),
                 "r"(schedule.tiles_n), "r"(schedule.raster_group));
    producer(ProducerEvent::parameters_read);
  }
  // Called by every thread of a math warpgroup; its first thread stamps.
  __device__ static void item(int warpgroup, int position, ItemEvent event) {
    if (threadIdx.x % 128 == 0 && position < TraceSlots::kTracedItems)
      stamp(TraceSlots::item(warpgroup, position, event));
  }
  // The item's first slice in shared memory: the warpgroup waits for it here, before its MMAs do
  // (a second wait on a completed phase returns at once: the stage is not released before them).
  template <class Pipeline, class State>
  __device__ static void first_slice(int warpgroup, int position, Pipeline& pipeline,
                                     const State& state) {
    pipeline.consumer_wait(state);
    item(warpgroup, position, ItemEvent::first_slice);
  }
  __device__ static void registers_taken(int warpgroup) {
    if (threadIdx.x % 128 == 0) stamp(TraceSlots::registers_taken(warpgroup));
  }
  __device__ static void finished(int warpgroup) {
    if (threadIdx.x % 128 == 0) stamp(TraceSlots::finished(warpgroup));
  }
};

// The table's address in device memory, for the host to clear and read.
inline uint64_t* clock_trace_table() {
  void* table = nullptr;
  CUDA_CHECK(cudaGetSymbolAddress(&table, g_clock_trace));
  return static_cast<uint64_t*>(table);
}
#endif

}  // namespace gemm::hopper
