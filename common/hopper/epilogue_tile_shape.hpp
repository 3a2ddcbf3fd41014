#pragma once
// The tile of lessons 16-18: a block's BlockM x BlockN tile of D with one consumer warpgroup per
// 64 rows, clusters of ClusterM blocks along M, Stages slices in the ring, and the TMA-store
// epilogue's subtiles (lesson 15): 64 x 64, two buffers per consumer.
// Taught in lesson 16: lessons/16_shape_heuristics/kernel.cuh spells it out
// (tests/tools/test_teaching_copies.py keeps the two identical).

#include "common/hopper/tile_shape.hpp"

namespace gemm::taught {

// BEGIN TEACHING COPY(TileShape)
template <int BlockM, int BlockN, int ClusterM, int Stages>
struct TileShape
    : gemm::hopper::TileShape<BlockM, BlockN, Stages,
                              /*Consumers=*/BlockM / gemm::hopper::kWarpgroupM, ClusterM> {
  static constexpr int kSubtileRows = TileShape::kWarpgroupM, kSubtileColumns = 64;
  static constexpr int kSubtiles = BlockN / kSubtileColumns;
  static constexpr int kEpilogueBuffers = 2;
  static_assert(BlockN % kSubtileColumns == 0, "the epilogue stores whole 64-column subtiles");
};
// END TEACHING COPY

}  // namespace gemm::taught
