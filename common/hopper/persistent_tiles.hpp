#pragma once
// The persistent scheduler of lesson 13: which cluster tiles a cluster of a persistent grid
// computes, in which order, and where its block's tile of each lies, as work items for the work
// queue (common/hopper/work_queue.hpp).
// Taught in lesson 13: lessons/13_persistent_raster/kernel.cuh spells it out with its exercise
// regions (tests/tools/test_teaching_copies.py keeps the two identical).

#include <cstdint>

#include "common/hopper/cluster_tile.hpp"
#include "common/hopper/work_item.hpp"
#include "common/host_device.hpp"
#include "common/schedule/persistent.hpp"
#include "common/schedule/raster.hpp"

namespace gemm::taught {

// BEGIN TEACHING COPY(PersistentClusterTiles)
// Cluster `cluster` of a grid of `clusters` computes the cluster tiles cluster, cluster +
// clusters, cluster + 2 clusters, ... of the grouped order (common/schedule/persistent.hpp and
// raster.hpp): bands of raster_group cluster rows, column by column. Both blocks of a cluster walk
// the same sequence, each its own tile row of every cluster tile (common/hopper/cluster_tile.hpp).
template <class Tile>
struct PersistentClusterTiles {
  int64_t cluster, clusters;      // this cluster of the persistent grid, and how many it has
  int64_t cluster_rows, tiles_n;  // cluster tiles down (kClusterM tile rows each), tiles across
  int raster_group;               // the band width of the grouped order, in cluster rows
  int k_slices;                   // slices per tile
  uint32_t rank;                  // this block's rank in its cluster

  // How many cluster tiles this cluster computes.
  GEMM_HOST_DEVICE int64_t count() const {
    return gemm::persistent_tile_count(cluster, clusters, cluster_rows * tiles_n);
  }

  // This block's work item for the cluster's i-th cluster tile: all of its own tile's slices.
  GEMM_HOST_DEVICE gemm::hopper::WorkItem item(int64_t i) const {
    const gemm::TileCoordinates tile = gemm::grouped_tile(
        gemm::persistent_tile(cluster, clusters, i), cluster_rows, tiles_n, raster_group);
    const gemm::hopper::TileOrigin origin = gemm::hopper::cluster_tile_origin<Tile>(tile, rank);
    return {origin.row0, origin.col0, 0, k_slices};
  }
};
// END TEACHING COPY

}  // namespace gemm::taught
