#pragma once
// The configuration of a warp-specialized Hopper GEMM block (lessons 09-15), the ring of operand
// tiles it fills, and its register budget.
//
// A block has one producer warpgroup (it issues the TMA loads) and kConsumers consumer
// warpgroups (they issue the wgmmas). Cooperative consumers split the block's BlockM x BlockN
// tile along M: each computes kConsumerRows full-width rows of it, with kRowBlocks wgmma.m64nNk16
// per k-step (N = BlockN), one per 64 rows. Lesson 09 runs one consumer on a 128 x 128 tile (two
// wgmmas per k-step); lesson 10 two consumers on a 128 x 256 tile (one each). Clusters of
// ClusterM blocks along M (lesson 12) share the B tile: each block loads kBSliceRows of its rows
// and multicasts them to every block of the cluster.

#include <cstdint>

#include <cuda_bf16.h>

#include "common/host_device.hpp"

namespace gemm::hopper {

using bf16 = __nv_bfloat16;

inline constexpr int kBlockK = 64;      // K per shared-memory slice: rows of 128 bytes
inline constexpr int kWarpgroupM = 64;  // rows of one wgmma (m64)
inline constexpr int kMmaK = 16;        // K of one wgmma

template <int BlockM_, int BlockN_, int Stages_, int Consumers_, int ClusterM_ = 1>
struct TileShape {
  static constexpr int kBlockM = BlockM_, kBlockN = BlockN_;  // the block's tile of D
  static constexpr int kStages = Stages_;                     // slices in the shared-memory ring
  static constexpr int kBlockK = hopper::kBlockK, kWarpgroupM = hopper::kWarpgroupM;
  // Warpgroup 0 produces, warpgroups 1 .. kConsumers consume.
  static constexpr int kConsumers = Consumers_;
  static constexpr int kThreads = (1 + kConsumers) * 128;
  static constexpr int kConsumerRows = kBlockM / kConsumers;  // rows of the tile per consumer
  static constexpr int kRowBlocks = kConsumerRows / kWarpgroupM;  // wgmmas per k-step and consumer
  static constexpr int kKSteps = kBlockK / kMmaK;                 // 16-wide k-steps per slice
  // fp32 accumulators per consumer thread: kConsumerRows x kBlockN over 128 threads.
  static constexpr int kAccumulators = kRowBlocks * kBlockN / 2;
  // The bytes TMA delivers into one block per stage: A's tile and B's (with clusters, part of B
  // comes from the other blocks' multicasts).
  static constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK * int(sizeof(bf16));
  static constexpr int kClusterM = ClusterM_;               // blocks per cluster, along M
  static constexpr int kBSliceRows = kBlockN / kClusterM;  // rows of B each block loads

  static_assert(kConsumerRows % kWarpgroupM == 0, "a consumer computes whole 64-row blocks");
  // More fp32 accumulators per thread do not fit next to everything else in a consumer's
  // registers: ptxas would spill them (C7511).
  static_assert(kAccumulators <= 128, "one consumer holds at most 128 accumulators per thread");
  // A consumer releases slice kt - 1 only after starting on slice kt (wgmma_wait_group<1>): with
  // one stage, slice kt could never be loaded.
  static_assert(kStages >= 2, "the ring needs at least two stages");
  static_assert(kBlockN % kClusterM == 0 && kBSliceRows % 8 == 0,
                "each block of a cluster loads whole 8-row groups of B");
};

// setmaxnreg's budget (lesson 10). A block of `threads` threads, `blocks_per_sm` of them per SM,
// starts with the registers per thread that __launch_bounds__(threads, blocks_per_sm) allows: the
// SM's 65536 shared out, rounded down to a multiple of 8. The producer warpgroup gives its share
// down to `producer_registers` (setmaxnreg.dec); the consumer threads take what that frees
// (setmaxnreg.inc), again in multiples of 8. A thread holds at most 255 registers, so with a
// single consumer warpgroup (lesson 16's 64-row tiles), whose share would be larger, the consumers
// stop at kMostConsumerRegisters.
inline constexpr int kRegistersPerSm = 65536;
inline constexpr int kMostConsumerRegisters = 240;
GEMM_HOST_DEVICE constexpr int registers_at_launch(int threads, int blocks_per_sm) {
  return kRegistersPerSm / (threads * blocks_per_sm) / 8 * 8;
}
GEMM_HOST_DEVICE constexpr int consumer_registers(int threads, int blocks_per_sm,
                                                  int producer_registers) {
  const int block_registers = registers_at_launch(threads, blocks_per_sm) * threads;
  const int share = (block_registers - 128 * producer_registers) / (threads - 128) / 8 * 8;
  return share < kMostConsumerRegisters ? share : kMostConsumerRegisters;
}

// The ring of operand slices, in dynamic shared memory. Every tile starts on a 1024-byte boundary
// (its size is a multiple of 1024 and the storage is aligned by gemm::aligned_shared_storage), as
// the 128-byte swizzle of TMA and wgmma requires.
template <class Tile>
struct OperandRing {
  alignas(1024) bf16 a[Tile::kStages][Tile::kBlockM * kBlockK];
  alignas(1024) bf16 b[Tile::kStages][Tile::kBlockN * kBlockK];
};

}  // namespace gemm::hopper
