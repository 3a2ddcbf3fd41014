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
///   SplitKScheduler         lesson 16's split-K plan (gemm::plan_split_k): every tile cut into
///                           equal parts, one per cluster, meeting in the same workspace; the
///                           same items as Stream-K's for that plan, worked out with one 32-bit
///                           division where Stream-K's general plan takes a dozen of 64 bits
///
/// All take the same run-time Schedule (the plan and the tile grid), and each is the one piece that
/// knows how its plans cut tiles:
///   can_run(plan)          whether it runs a plan (the launch asks)
///   work_items<Tile>       the items of one cluster, for the producer
///   Workspace<Tile>        where the parts of a cut tile meet (bytes(plan), in(memory, plan)):
///                          nothing for whole tiles
///   fixup<Tile>            what the consumers do with an item after its MMAs: whether it stores
///                          the tile (lesson 14's fixup for the parts of a cut one)
/// A scheduler's producer keeps kProducerRegisters (Stream-K's 64-bit arithmetic needs more than
/// lesson 13's loop).

#include <cstdint>

#include "common/hopper/persistent_tiles.hpp"
#include "common/hopper/stream_k_fixup.hpp"
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

/// The workspace of a scheduler that cuts no tile: none.
struct NoWorkspace {
  static constexpr size_t bytes(const StreamKPlan&) { return 0; }
  static constexpr size_t flag_bytes(const StreamKPlan&) { return 0; }
  static NoWorkspace in(void*, const StreamKPlan&) { return {}; }
};

/// The fixup of the schedulers that cut tiles (Stream-K, split-K): lesson 14's, in the workspace
/// where the parts meet.
struct CutTiles {
  static constexpr bool kCutsTiles = true;
  template <class Tile>
  using Workspace = StreamKWorkspace<Tile>;
#if defined(__CUDACC__)
  template <class Tile>
  __device__ static bool fixup(const Workspace<Tile>& workspace, const WorkItem& item,
                               float (&accumulator)[Tile::kRowBlocks][Tile::kBlockN / 2]) {
    return taught::stream_k_fixup<Tile>(workspace, item, accumulator);
  }
#endif
};

struct DataParallelScheduler {
  static constexpr bool kCutsTiles = false;
  static constexpr int kProducerRegisters = 40;
  static constexpr bool can_run(const StreamKPlan& plan) { return plan.sk_tiles == 0; }
  template <class Tile>
  using Workspace = NoWorkspace;
#if defined(__CUDACC__)
  // Every item is a whole tile, and stores it.
  template <class Tile>
  __device__ static bool fixup(const NoWorkspace&, const WorkItem&,
                               float (&)[Tile::kRowBlocks][Tile::kBlockN / 2]) {
    return true;
  }
#endif
  template <class Tile>
  GEMM_HOST_DEVICE static taught::PersistentClusterTiles<Tile> work_items(const Schedule& schedule,
                                                                          int64_t cluster,
                                                                          uint32_t rank) {
    return {cluster,          schedule.plan.workers,        schedule.cluster_rows,
            schedule.tiles_n, schedule.raster_group,        int(schedule.plan.k_iterations),
            rank};
  }
};

struct StreamKScheduler : CutTiles {
  // (Lesson 14's producer ran in 56; with the epilogue loader beside it in the final kernel's
  // producer warpgroup, 56 leaves ptxas no slack, and a hand-out's stubs tip it into a spill.)
  static constexpr int kProducerRegisters = 64;
  static constexpr bool can_run(const StreamKPlan&) { return true; }
  template <class Tile>
  GEMM_HOST_DEVICE static StreamKWorkItems<Tile> work_items(const Schedule& schedule,
                                                            int64_t cluster, uint32_t rank) {
    return {schedule.plan, cluster, schedule.cluster_rows, schedule.tiles_n,
            schedule.raster_group, rank};
  }
};

/// The work items of cluster `cluster` in a split-K plan: with every tile cut into `parts` equal
/// parts, worker w has exactly one item, part w % parts of tile w / parts (k-iterations
/// unit * share .. unit * share + share); with no tile cut (a plan_split_k that found no split),
/// whole tiles w, w + W, ... These are the items StreamKWorkItems walks for the same plan (the
/// host test SplitKWorkItems.AreStreamKsForTheSamePlan), found with one 32-bit division: the
/// first item is on every block's critical path, since no load starts before it. (A tile's
/// k-iterations, and the workers, fit in 32 bits: the contract's K is below 2^30.)
// It holds what Stream-K's walk of the plan holds, and answers count() and item(i) in its own way.
template <class Tile>
struct SplitKWorkItems : StreamKWorkItems<Tile> {
  using StreamKWorkItems<Tile>::plan;
  using StreamKWorkItems<Tile>::cluster;
  using StreamKWorkItems<Tile>::cluster_rows;
  using StreamKWorkItems<Tile>::tiles_n;
  using StreamKWorkItems<Tile>::raster_group;
  using StreamKWorkItems<Tile>::rank;

  GEMM_HOST_DEVICE int64_t count() const {
    return plan.sk_tiles == 0 ? data_parallel_count(plan, cluster) : 1;
  }

  GEMM_HOST_DEVICE WorkItem item(int64_t i) const {
    StreamKWork work;  // a whole tile: worker w's i-th, w + i W
    work.tile = cluster + i * plan.workers;
    work.k_end = plan.k_iterations;
    if (plan.sk_tiles != 0) {
      const int worker = int(cluster), share = int(plan.share);
      const int parts = int(plan.k_iterations) / share;
      const int tile = worker / parts, part = worker - tile * parts;
      work.tile = tile;
      work.unit = part;
      work.units = parts;
      work.k_begin = part * share;
      work.k_end = work.k_begin + share;
    }
    return work_item_of<Tile>(work, cluster_rows, tiles_n, raster_group, rank);
  }
};

struct SplitKScheduler : CutTiles {
  static constexpr int kProducerRegisters = StreamKScheduler::kProducerRegisters;
  // A plan of plan_split_k: no tile cut, or every tile cut into the same number of equal parts,
  // one per worker.
  static constexpr bool can_run(const StreamKPlan& plan) {
    return plan.sk_tiles == 0 ||
           (plan.sk_tiles == plan.tiles && plan.longer == 0 && plan.share > 0 &&
            plan.k_iterations % plan.share == 0 &&
            plan.workers == plan.tiles * (plan.k_iterations / plan.share));
  }
  template <class Tile>
  GEMM_HOST_DEVICE static SplitKWorkItems<Tile> work_items(const Schedule& schedule,
                                                           int64_t cluster, uint32_t rank) {
    return {StreamKScheduler::work_items<Tile>(schedule, cluster, rank)};
  }
};

}  // namespace gemm::hopper
