#pragma once
// Where the parts of a Stream-K tile meet (lessons 14-15): the workspace, and the work items of a
// Stream-K plan (common/schedule/stream_k.hpp) for the work queue (common/hopper/work_queue.hpp).
// Introduced in lesson 14 (its README walks through it).

#include <cstddef>
#include <cstdint>

#include "common/gemm.hpp"
#include "common/hopper/cluster_tile.hpp"
#include "common/hopper/work_item.hpp"
#include "common/host_device.hpp"
#include "common/schedule/raster.hpp"
#include "common/schedule/stream_k.hpp"

namespace gemm::hopper {

// For each block's tile of each Stream-K cluster tile: a flag (how many parts have added their
// partial sums so far) and the partial sums themselves, BlockM x BlockN fp32, laid out in the
// consumers' register order (a float4 of each consumer thread, then the next float4), so that
// every access is a coalesced 16-byte load or store.
template <class Tile>
struct StreamKWorkspace {
  static constexpr int kConsumerThreads = Tile::kConsumers * 128;
  static constexpr int64_t kTileFloats = int64_t(Tile::kBlockM) * Tile::kBlockN;
  uint32_t* flags = nullptr;   // [slot]
  float* partials = nullptr;   // [slot][kTileFloats]

  // The slot of the block of rank `rank` in Stream-K cluster tile `tile`.
  GEMM_HOST_DEVICE static constexpr int64_t slot(int64_t tile, uint32_t rank) {
    return tile * kClusterBlocksOf<Tile> + rank;
  }
  // The bytes for a plan: the flags, rounded up to 256 bytes, then the partial sums.
  static constexpr size_t flag_bytes(const StreamKPlan& plan) {
    return ceil_div<size_t>(size_t(plan.sk_tiles) * kClusterBlocksOf<Tile> * sizeof(uint32_t), 256) * 256;
  }
  static constexpr size_t bytes(const StreamKPlan& plan) {
    return flag_bytes(plan) + size_t(plan.sk_tiles) * kClusterBlocksOf<Tile> * kTileFloats * sizeof(float);
  }
  // The workspace laid out in `memory` (at least bytes(plan) of it).
  static StreamKWorkspace in(void* memory, const StreamKPlan& plan) {
    return {static_cast<uint32_t*>(memory),
            reinterpret_cast<float*>(static_cast<unsigned char*>(memory) + flag_bytes(plan))};
  }
};

// This block's work item for `work`, a part of a cluster tile numbered in the grouped order
// (lesson 13) of cluster_rows x tiles_n cluster tiles: its tile's origin, its k-range and part, and
// its workspace slot.
template <class Tile>
GEMM_HOST_DEVICE WorkItem work_item_of(const StreamKWork& work, int64_t cluster_rows,
                                       int64_t tiles_n, int raster_group, uint32_t rank) {
  const TileOrigin origin = cluster_tile_origin<Tile>(
      grouped_tile(work.tile, cluster_rows, tiles_n, raster_group), rank);
  return {origin.row0,     origin.col0,    int(work.k_begin),
          int(work.k_end), int(work.unit), int(work.units),
          StreamKWorkspace<Tile>::slot(work.tile, rank)};
}

// The work items of cluster `cluster` in a Stream-K plan: its Stream-K units (parts of tiles),
// then its whole tiles (common/schedule/stream_k.hpp). Tile numbers are positions in the grouped
// order (lesson 13); both blocks of a cluster walk the same items, each its own tile row of every
// cluster tile. The same interface as lesson 13's PersistentClusterTiles: count() and item(i).
template <class Tile>
struct StreamKWorkItems {
  StreamKPlan plan;
  int64_t cluster;                // this cluster of the persistent grid: worker `cluster`
  int64_t cluster_rows, tiles_n;  // cluster tiles down, tiles across
  int raster_group;               // the band width of the grouped order, in cluster rows
  uint32_t rank;                  // this block's rank in its cluster

  GEMM_HOST_DEVICE int64_t count() const { return stream_k_work_count(plan, cluster); }

  GEMM_HOST_DEVICE WorkItem item(int64_t i) const {
    return work_item_of<Tile>(stream_k_work(plan, cluster, i), cluster_rows, tiles_n,
                              raster_group, rank);
  }
};

}  // namespace gemm::hopper
