#pragma once
/// The tile of the course's final kernel (common/hopper/gemm_kernel.cuh, lessons 15-19): what one
/// block computes, how its consumer warpgroups share it, and how its epilogue cuts it.
///
///   BlockM x BlockN   the block's tile of D
///   ClusterM          blocks per cluster along M; each loads 1 / ClusterM of B's slice and
///                     multicasts it to the others (lesson 12)
///   ClusterN          blocks per cluster along N (lesson 16), where ClusterM is 1: they share
///                     A's slice instead, each loading 1 / ClusterN of its rows and multicasting
///                     them; a tile taller than it is wide reads less from L2 so
///   Stages            slices in the shared-memory ring (lesson 08)
///   Consumers         how the math warpgroups share the work:
///                       cooperative: BlockM / 64 warpgroups split every tile along M, 64 rows
///                       each (lesson 10);
///                       pingpong: two warpgroups take the block's tiles in turns, each a whole
///                       tile, one's epilogue under the other's MMAs (lesson 11)
///   SubtileColumns    the width of the epilogue's subtiles, which the TMA store writes (lesson
///                     15): 64 columns of bf16 (128-byte rows, the 128-byte swizzle), 32 (64-byte
///                     rows and swizzle) or 16 (32-byte); a tile holds a whole number of them
///   EpilogueBuffers   the subtile buffers of each math warpgroup: while the TMA store of one
///                     still reads it, the warpgroup fills another
///
/// The base gemm::hopper::TileShape (lessons 09-14) counts the warpgroups that share ONE tile
/// (kConsumers): with ping-pong that is one, while the block has two (kMathWarpgroups).
/// Host and device; no CUDA code.

#include <cstdint>

#include "common/hopper/tile_shape.hpp"
#include "common/host_device.hpp"

namespace gemm::hopper {

enum class ConsumerKind { cooperative, pingpong };

template <int BlockM, int BlockN, int ClusterM, int Stages,
          ConsumerKind Consumers = ConsumerKind::cooperative, int SubtileColumns = 64,
          int EpilogueBuffers = 2, int ClusterN = 1>
struct KernelTile
    : TileShape<BlockM, BlockN, Stages,
                /*Consumers=*/Consumers == ConsumerKind::cooperative ? BlockM / kWarpgroupM : 1,
                ClusterM> {
  static constexpr ConsumerKind kConsumerKind = Consumers;
  static constexpr bool kPingPong = Consumers == ConsumerKind::pingpong;
  // The block's math warpgroups, and with the producer warpgroup its threads.
  static constexpr int kMathWarpgroups = kPingPong ? 2 : BlockM / kWarpgroupM;
  static constexpr int kThreads = (1 + kMathWarpgroups) * 128;

  // A cluster along N: the blocks of a cluster, and the rows of A's slice each loads.
  static constexpr int kClusterN = ClusterN;
  static constexpr int kClusterBlocks = ClusterM * ClusterN;
  static constexpr int kASliceRows = BlockM / ClusterN;
  static_assert(ClusterM == 1 || ClusterN == 1, "a cluster lies along M or along N");
  static_assert(BlockM % ClusterN == 0 && kASliceRows % 8 == 0,
                "each block of a cluster along N loads whole 8-row groups of A");

  // The epilogue's subtiles: one wgmma's 64 rows by SubtileColumns, each a TMA box in the swizzle
  // as wide as its rows, and the buffers per math warpgroup.
  static constexpr int kSubtileRows = kWarpgroupM, kSubtileColumns = SubtileColumns;
  static constexpr int kSubtileRowBytes = SubtileColumns * int(sizeof(bf16));
  static constexpr int kSubtiles = BlockN / SubtileColumns;  // per 64-row block
  static constexpr int kEpilogueBuffers = EpilogueBuffers;

  static_assert(SubtileColumns == 64 || SubtileColumns == 32 || SubtileColumns == 16,
                "a subtile row is 128, 64 or 32 bytes: one of TMA's swizzle widths");
  static_assert(BlockN % SubtileColumns == 0, "the epilogue stores whole subtiles");
  static_assert(!kPingPong || BlockM % kWarpgroupM == 0, "a ping-pong tile is whole 64-row blocks");

  // Whether math warpgroup `warpgroup` computes the block's work item at `position` (0, 1, ...
  // in the order the producer posts them), and the first row of the tile that it computes.
  GEMM_HOST_DEVICE static constexpr bool computes(int warpgroup, int64_t position) {
    return !kPingPong || position % 2 == warpgroup;
  }
  GEMM_HOST_DEVICE static constexpr int first_row(int warpgroup) {
    return kPingPong ? 0 : warpgroup * KernelTile::kConsumerRows;
  }
};

}  // namespace gemm::hopper
