#pragma once
// The producer's load loop over a k-range: slices k_begin .. k_end - 1 of one tile of A and B,
// each into the next stage of the ring, with one TMA load per operand.
// Taught in lesson 09: lessons/09_warp_specialization/kernel.cuh spells it out with its exercise
// region (tests/tools/test_teaching_copies.py keeps the two identical). Lesson 12 replaces it by
// load_k_range_multicast for clusters.

#include <cstdint>

#include <cuda.h>

#include "common/gemm.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/ptx/tma.hpp"
#include "common/schedule/pipeline_state.hpp"

namespace gemm::taught {

#if defined(__CUDACC__)
// BEGIN TEACHING COPY(load_k_range)
// One thread loads slices k_begin .. k_end - 1 of the tile whose first row of A is row0 and
// first row of B is col0; `state` walks on through the ring (it carries on from call to call).
template <class Tile, class Pipeline>
__device__ inline void load_k_range(Pipeline& pipeline, gemm::hopper::OperandRing<Tile>& ring,
                                    const CUtensorMap& a_map, const CUtensorMap& b_map, int row0,
                                    int col0, int k_begin, int k_end,
                                    gemm::PipelineState<Tile::kStages>& state) {
  for (int slice = k_begin; slice < k_end; ++slice) {
    pipeline.producer_acquire(state, Tile::kStageBytes);
    uint64_t* full = pipeline.full_barrier(state);
    gemm::ptx::tma_load_2d(ring.a[state.index], &a_map, full, slice * Tile::kBlockK, row0);
    gemm::ptx::tma_load_2d(ring.b[state.index], &b_map, full, slice * Tile::kBlockK, col0);
    state.advance();
  }
}
// END TEACHING COPY
#endif

}  // namespace gemm::taught
