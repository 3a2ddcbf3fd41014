#pragma once
/// What the final kernel's roles record of their time (common/hopper/gemm_kernel.cuh,
/// consumers.hpp): a piece of the kernel, as the launch policy is.
///
///   parameters_read(schedule)       thread 0 of the block, first thing: the schedule's values read
///                                   from the kernel's parameters (a probe of how long the first
///                                   read of a parameter takes)
///   producer(event)                 thread 0 of the block: the kernel started; the barriers
///                                   initialized (and the tensor maps' prefetch issued); the
///                                   cluster barrier passed (the barriers visible to both
///                                   blocks); the producer warpgroup set up (its registers given
///                                   back); the schedule made (its first item about to be
///                                   worked out); the first item posted to the math warpgroups
///                                   and the epilogue, its first load about to be issued; the
///                                   last load issued
///   item(warpgroup, position, e)    the first thread of math warpgroup `warpgroup`, for its first
///                                   kTracedItems work items (position: the block's item count, or
///                                   a ping-pong warpgroup's own): received from the producer; its
///                                   first slice in shared memory; its MMAs complete; its tile's
///                                   stores issued (none for a part of a cut tile that the fixup
///                                   did not end)
///   registers_taken(warpgroup)      ... once its setmaxnreg has given it its registers
///   finished(warpgroup)             ... once its last TMA store has drained
///
/// NoTrace, the course's kernels': every call compiles to nothing. profiles/role_timeline.cu runs
/// the kernels with ClockTrace (common/hopper/clock_trace.hpp), which writes the global timer into
/// a table of TraceSlots::kCount stamps per block.
///
///   kCompiledWith<Kind>             whether kernels with this trace are compiled for epilogue kind
///                                   Kind (common/hopper/epilogue_kind.hpp): NoTrace, every kind;
///                                   ClockTrace, the plain product's alone, since its stamps take
///                                   registers that the fused epilogues of the widest tiles lack
/// Host and device.

#include <cstdint>

#include "common/host_device.hpp"

namespace gemm::hopper {

enum class ProducerEvent {
  started,
  parameters_read,
  barriers_initialized,
  cluster_synced,
  set_up,
  first_load,
  counted,
  item_made,
  queue_posted,
  first_posted,
  last_load
};
enum class ItemEvent { received, first_slice, mmas_complete, stored };

struct TraceSlots {
  static constexpr int kProducerEvents = 11, kItemEvents = 4;
  static constexpr int kTracedItems = 4, kMathWarpgroups = 2;
  // The items' events, then registers taken and finished.
  static constexpr int kPerWarpgroup = kTracedItems * kItemEvents + 2;
  static constexpr int kCount = kProducerEvents + kMathWarpgroups * kPerWarpgroup;

  GEMM_HOST_DEVICE static constexpr int producer(ProducerEvent event) { return int(event); }
  GEMM_HOST_DEVICE static constexpr int item(int warpgroup, int position, ItemEvent event) {
    return kProducerEvents + warpgroup * kPerWarpgroup + position * kItemEvents + int(event);
  }
  GEMM_HOST_DEVICE static constexpr int registers_taken(int warpgroup) {
    return kProducerEvents + warpgroup * kPerWarpgroup + kTracedItems * kItemEvents;
  }
  GEMM_HOST_DEVICE static constexpr int finished(int warpgroup) {
    return registers_taken(warpgroup) + 1;
  }
};

struct NoTrace {
  template <class Kind>
  static constexpr bool kCompiledWith = true;
#if defined(__CUDACC__)
  __device__ static void producer(ProducerEvent) {}
  template <class Schedule>
  __device__ static void parameters_read(const Schedule&) {}
  __device__ static void item(int, int, ItemEvent) {}
  template <class Pipeline, class State>
  __device__ static void first_slice(int, int, Pipeline&, const State&) {}
  __device__ static void registers_taken(int) {}
  __device__ static void finished(int) {}
#endif
};

}  // namespace gemm::hopper
