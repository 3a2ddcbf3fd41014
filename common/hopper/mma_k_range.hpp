#pragma once
// The consumer's MMA loop over a k-range: per slice, one wgmma.m64nNk16 per k-step for each of
// the consumer's 64-row blocks (N = BlockN), committed as one group; the previous slice's group is
// retired and its stage released while this one runs.
// Taught in lesson 09: lessons/09_warp_specialization/kernel.cuh spells it out with its exercise
// region (tests/tools/test_teaching_copies.py keeps the two identical). Lesson 10's cooperative
// consumers run it on their rows of the tile, lesson 11's ping-pong consumers on whole tiles.

#include "common/gemm.hpp"
#include "common/hopper/kstep_descriptor.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/pipeline_state.hpp"

namespace gemm::taught {

#if defined(__CUDACC__)
// BEGIN TEACHING COPY(mma_k_range)
// Slices k_begin .. k_end - 1 (at least one) of the consumer's rows first_row ..
// first_row + kConsumerRows - 1 of the tile, into its accumulators (one array of BlockN / 2 per
// 64-row block); the first k-step of slice k_begin overwrites them (scale-d = 0, lesson 07).
// `read_state` walks on through the ring. On return the last slice's wgmmas may still run and its
// stage is not released: the returned state is that stage's, for mma_drain.
template <class Tile, class Pipeline>
__device__ inline gemm::PipelineState<Tile::kStages> mma_k_range(
    Pipeline& pipeline, const gemm::hopper::OperandRing<Tile>& ring,
    float (&accumulator)[Tile::kRowBlocks][Tile::kBlockN / 2], int first_row, int k_begin,
    int k_end, gemm::PipelineState<Tile::kStages>& read_state) {
  auto release_state = read_state;  // the oldest stage this warpgroup still reads
  for (int kt = k_begin; kt < k_end; ++kt) {
    pipeline.consumer_wait(read_state);
    const bf16* a_rows = ring.a[read_state.index] + first_row * Tile::kBlockK;
    const bf16* b_tile = ring.b[read_state.index];
    gemm::ptx::warpgroup_fence_operand(accumulator);
    gemm::ptx::wgmma_fence();
#pragma unroll
    for (int step = 0; step < Tile::kKSteps; ++step) {
#pragma unroll
      for (int r = 0; r < Tile::kRowBlocks; ++r)
        gemm::ptx::wgmma_m64k16_bf16<Tile::kBlockN>(
            accumulator[r],
            gemm::taught::kstep_descriptor(a_rows + r * Tile::kWarpgroupM * Tile::kBlockK, step),
            gemm::taught::kstep_descriptor(b_tile, step), /*accumulate=*/kt > k_begin || step > 0);
    }
    gemm::ptx::wgmma_commit_group();
    gemm::ptx::wgmma_wait_group<1>();
    gemm::ptx::warpgroup_fence_operand(accumulator);
    if (kt > k_begin) {
      pipeline.consumer_release(release_state);
      release_state.advance();
    }
    read_state.advance();
  }
  return release_state;
}
// END TEACHING COPY
#endif

}  // namespace gemm::taught
