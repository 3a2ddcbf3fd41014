#pragma once
// What every consumer warpgroup does after its MMA loop (lessons 09-15): retire the last slice's
// wgmmas and release its stage.

#include "common/ptx/wgmma.hpp"

namespace gemm::hopper {

#if defined(__CUDACC__)
// Waits until no wgmma group of this warpgroup is pending, fences the accumulators (only now may
// they be read), then releases `last_stage`, the stage that the last group read: the state that
// the MMA loop (mma_k_range) returned.
template <class Pipeline, class Accumulators>
__device__ inline void mma_drain(Pipeline& pipeline, Accumulators& accumulator,
                                 const typename Pipeline::State& last_stage) {
  ptx::wgmma_wait_group<0>();
  ptx::warpgroup_fence_operand(accumulator);
  pipeline.consumer_release(last_stage);
}
#endif

}  // namespace gemm::hopper
