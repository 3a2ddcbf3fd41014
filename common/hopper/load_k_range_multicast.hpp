#pragma once
// The producer's load loop over a k-range in a cluster (lessons 12-15): slices k_begin ..
// k_end - 1 of one tile, A's tile loaded by this block alone, B's tile loaded in kClusterM slices,
// one per block of the cluster, each multicast into every block.
// Taught in lesson 12: lessons/12_cluster_multicast/kernel.cuh spells it out with its exercise
// region (tests/tools/test_teaching_copies.py keeps the two identical).

#include <cstdint>

#include <cuda.h>

#include "common/gemm.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/ptx/tma.hpp"
#include "common/schedule/pipeline_state.hpp"

namespace gemm::taught {

#if defined(__CUDACC__)
// BEGIN TEACHING COPY(load_k_range_multicast)
// One thread of the block of rank `rank` loads slices k_begin .. k_end - 1 of its tile (first row
// of A row0, first row of B col0); `state` walks on through the ring. Every block of the cluster
// must call it for the same slices: each block's full barrier counts the bytes of all of them,
// stage_bytes per stage (less than the tile's only where A's box is shorter than its tile: the
// final kernel's, when A has fewer rows than a tile).
template <class Tile, class Pipeline>
__device__ inline void load_k_range_multicast(Pipeline& pipeline,
                                              gemm::hopper::OperandRing<Tile>& ring,
                                              const CUtensorMap& a_map, const CUtensorMap& b_map,
                                              int row0, int col0, uint32_t rank, int k_begin,
                                              int k_end, gemm::PipelineState<Tile::kStages>& state,
                                              uint32_t stage_bytes = Tile::kStageBytes) {
  for (int slice = k_begin; slice < k_end; ++slice) {
    pipeline.producer_acquire(state, stage_bytes);
    uint64_t* full = pipeline.full_barrier(state);
    gemm::ptx::tma_load_2d(ring.a[state.index], &a_map, full, slice * Tile::kBlockK, row0);
    bf16* b_slice = ring.b[state.index] + rank * Tile::kBSliceRows * Tile::kBlockK;
    const uint16_t every_block = (1u << Tile::kClusterM) - 1;
    gemm::ptx::tma_load_2d_multicast(b_slice, &b_map, full, slice * Tile::kBlockK,
                                     col0 + int(rank) * Tile::kBSliceRows, every_block);
    state.advance();
  }
}
// END TEACHING COPY
#endif

}  // namespace gemm::taught
