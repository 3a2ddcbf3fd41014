#pragma once
/// The final kernel's tile scheduler (common/hopper/gemm_kernel.cuh): which work items each cluster
/// of the persistent grid computes, in the grouped order of lesson 13, and what its producer needs
/// to work them out.
///
///   DataParallelScheduler   whole cluster tiles: cluster c of W takes tiles c, c + W, ... (lesson
///                           13's PersistentClusterTiles); no tile is cut, no fixup, no workspace
///   StreamKScheduler        lesson 14's Stream-K plan: the last waves' tiles cut along K into one
///                           range per cluster, the parts meeting in a workspace (the fixup), the
///                           other tiles whole; a plan that cuts nothing is data-parallel
///
/// Both take the same run-time Schedule (the plan and the tile grid); a scheduler's producer
/// keeps kProducerRegisters (Stream-K's 64-bit arithmetic needs more than lesson 13's loop).

#include <cstdint>

#include "common/hopper/persistent_tiles.hpp"
#include "common/hopper/stream_k_workspace.hpp"
#include "common/hopper/work_item.hpp"
#include "common/schedule/stream_k.hpp"

namespace gemm::hopper {

/// The persistent grid's work, made on the host: the plan (its workers are the grid's clusters,
/// its k-iterations the slices of a tile) and the grid of cluster tiles it numbers.
struct Schedule {
  StreamKPlan plan;
  int cluster_rows, tiles_n;  // cluster tiles down (kClusterM tile rows each), tiles across
  int raster_group;           // the band width of the grouped order, in cluster rows
};

struct DataParallelScheduler {
  static constexpr bool kCutsTiles = false;
  static constexpr int kProducerRegisters = 40;
  template <class Tile>
  GEMM_HOST_DEVICE static taught::PersistentClusterTiles<Tile> work_items(const Schedule& schedule,
                                                                          int64_t cluster,
                                                                          uint32_t rank) {
    return {cluster,          schedule.plan.workers,        schedule.cluster_rows,
            schedule.tiles_n, schedule.raster_group,        int(schedule.plan.k_iterations),
            rank};
  }
};

struct StreamKScheduler {
  static constexpr bool kCutsTiles = true;
  // (Lesson 14's producer ran in 56; with the epilogue loader beside it in the final kernel's
  // producer warpgroup, 56 leaves ptxas no slack, and a hand-out's stubs tip it into a spill.)
  static constexpr int kProducerRegisters = 64;
  template <class Tile>
  GEMM_HOST_DEVICE static StreamKWorkItems<Tile> work_items(const Schedule& schedule,
                                                            int64_t cluster, uint32_t rank) {
    return {schedule.plan, cluster, schedule.cluster_rows, schedule.tiles_n,
            schedule.raster_group, rank};
  }
};

}  // namespace gemm::hopper
