#pragma once
// The TMA pipeline of lessons 09-15: a ring of Stages shared-memory stages between one producer
// thread, which fills them with TMA loads, and the consumer warpgroups, which read them with wgmma.
// Introduced in lesson 09 (its README walks through it); lesson 12 extends it to clusters
// (common/hopper/cluster_pipeline.hpp).
//
// Each stage s has two mbarriers:
//   full[s]   completes a phase when the producer has arrived (once, announcing the bytes it is
//             about to load) and all those bytes have landed: the consumers wait on it;
//   empty[s]  completes a phase when every consumer warp that reads the stage has arrived, after
//             the wgmmas that read it are complete: the producer waits on it before a refill.
// Each role walks the ring with its own PipelineState {index, phase}
// (common/schedule/pipeline_state.hpp); the producer starts on the opposite phase, so that its
// first pass through the ring does not wait for releases that nobody has made.
//
// The four verbs are CUTLASS's names: producer_acquire, (producer_commit: nothing to do with TMA,
// whose bytes complete the full barrier by themselves), consumer_wait, consumer_release.

#include <cstdint>

#include "common/ptx/fence.hpp"
#include "common/ptx/mbarrier.hpp"
#include "common/schedule/pipeline_state.hpp"

namespace gemm::hopper {

template <int Stages>
struct TmaPipeline {
  static constexpr int kStages = Stages;
  using State = PipelineState<Stages>;

  uint64_t full[Stages];
  uint64_t empty[Stages];

#if defined(__CUDACC__)
  // One thread initializes every barrier, then makes the initialization visible to the async
  // proxy (TMA completes the full barriers). The caller's block barrier (cluster barrier with
  // clusters) then makes it visible to every thread before anyone waits or arrives.
  // `consumer_warps`: the warps that release each stage.
  __device__ void init(int consumer_warps) {
    init_barriers(consumer_warps);
    ptx::fence_mbarrier_init();
  }

  // The barriers alone, for a thread that sets up several pipelines and then fences once (lesson
  // 15's epilogue loader): fence_mbarrier_init() orders every earlier init of the thread.
  __device__ void init_barriers(int consumer_warps) {
    for (int stage = 0; stage < Stages; ++stage) {
      ptx::mbarrier_init(&full[stage], 1);
      ptx::mbarrier_init(&empty[stage], consumer_warps);
    }
  }

  // Producer: wait until the consumers have released the stage, then announce the bytes about to
  // be loaded into it (the producer's one arrival on the full barrier).
  __device__ void producer_acquire(const State& state, uint32_t bytes) {
    ptx::mbarrier_wait(&empty[state.index], state.phase);
    ptx::mbarrier_arrive_expect_tx(&full[state.index], bytes);
  }

  // The barrier the TMA loads into the stage complete.
  __device__ uint64_t* full_barrier(const State& state) { return &full[state.index]; }

  // Consumer: wait until the stage's bytes have landed.
  __device__ void consumer_wait(const State& state) {
    ptx::mbarrier_wait(&full[state.index], state.phase);
  }

  // Consumer: this warp no longer reads the stage; lane 0 arrives for the warp. Call it only
  // after the wgmmas that read the stage are known to be complete (wgmma_wait_group).
  __device__ void consumer_release(const State& state) {
    if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&empty[state.index]);
  }
#endif
};

}  // namespace gemm::hopper
