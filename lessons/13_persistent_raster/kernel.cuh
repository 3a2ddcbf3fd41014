// Lesson 13: a persistent tile scheduler with grouped rasterization.
//
// Lesson 12 launches one cluster per pair of tiles, and the hardware starts them roughly in the
// order of their index: row by row of tiles. Two things are lost that way. Every cluster starts
// with an empty pipeline and ends by draining it, so the tensor cores idle at every tile
// boundary. And the tiles computed at the same moment span whole rows of D, so for wide problems
// they read all of B at once, more than L2 holds, and B comes from HBM again and again. Here the
// grid is persistent: exactly as many clusters as fit on the GPU at once, each looping over tiles.
// Its producer decides which tile comes next, posts it to the consumers through a small work
// queue, and loads the next tile's slices while the consumers still store the current one; the
// pipeline's phases carry on from tile to tile. The tiles are visited in grouped order
// (common/schedule/raster.hpp): bands of a few tile rows, column by column, so that the clusters
// working at any moment share a few rows of A and a few columns of B, and L2 serves them. (A
// persistent grid does not fix the last round of tiles: when the tile count is just past a
// multiple of the clusters, most of them still idle while a few finish. Lesson 14 does.)
// Graded instruction signature: HGMMA UTMALDG.2D.MULTICAST SYNCS.PHASECHK USETMAXREG
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/gemm.hpp"
#include "common/hopper/cluster_pipeline.hpp"
#include "common/hopper/cluster_tile.hpp"
#include "common/hopper/consumer.hpp"
#include "common/hopper/load_k_range_multicast.hpp"
#include "common/hopper/mma_k_range.hpp"
#include "common/hopper/pipeline.hpp"
#include "common/hopper/producer_tail.hpp"
#include "common/hopper/store_rows.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/hopper/work_queue.hpp"
#include "common/host_device.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/cluster.hpp"
#include "common/ptx/setmaxnreg.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/persistent.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/schedule/raster.hpp"
#include "common/shared_memory.hpp"
#include "common/tensor_map.hpp"

namespace lesson13 {

using gemm::bf16;
using gemm::hopper::kBlockK;  // K per shared-memory slice: rows of 128 bytes
using gemm::taught::ClusterTmaPipeline;      // lesson 12's pipeline
using gemm::taught::load_k_range_multicast;  // lesson 12's producer loop
using gemm::taught::mma_k_range;             // lesson 09's consumer loop
using gemm::taught::producer_tail;           // lesson 12's exit
using gemm::taught::store_rows;              // lesson 07's epilogue

// The configuration of lesson 12: 128 x 256 tiles, 2 consumers, 4 stages, clusters of 2.
using DefaultTile = gemm::hopper::TileShape<128, 256, 4, /*Consumers=*/2, /*ClusterM=*/2>;
constexpr int kBlocksPerSm = 1;

// The register budget (lesson 10): kProducerRegisters for the producer, the rest for the consumers.
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters =
    gemm::hopper::consumer_registers(DefaultTile::kThreads, kBlocksPerSm, kProducerRegisters);

// NEW in lesson 13: the work queue's depth: the producer may post the next tile while the
// consumers still work on the current one.
constexpr int kWorkQueueDepth = 2;

template <class Tile>
struct SharedStorage {
  gemm::hopper::OperandRing<Tile> ring;
  ClusterTmaPipeline<Tile::kStages, Tile::kClusterM> pipeline;  // of a cluster (lesson 12)
  // NEW in lesson 13: the producer's tiles, posted to the consumers (common/hopper/work_queue.hpp).
  gemm::hopper::WorkQueue<kWorkQueueDepth> queue;
};

// NEW in lesson 13: the persistent scheduler: which cluster tiles this cluster computes, in which
// order, and where this block's tile of each lies.
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
    // BEGIN EXERCISE(tile_count, returns): how many of all the cluster tiles this cluster
    //   computes in the persistent schedule
    return gemm::persistent_tile_count(cluster, clusters, cluster_rows * tiles_n);
    // END EXERCISE
  }

  // This block's work item for the cluster's i-th cluster tile: all of its own tile's slices.
  GEMM_HOST_DEVICE gemm::hopper::WorkItem item(int64_t i) const {
    // BEGIN EXERCISE(tile_order, declares=tile): which cluster tile (row and column of cluster
    //   tiles) the cluster's i-th is, in the grouped order
    const gemm::TileCoordinates tile = gemm::grouped_tile(
        gemm::persistent_tile(cluster, clusters, i), cluster_rows, tiles_n, raster_group);
    // END EXERCISE
    const gemm::hopper::TileOrigin origin = gemm::hopper::cluster_tile_origin<Tile>(tile, rank);
    return {origin.row0, origin.col0, 0, k_slices};
  }
};
// END TEACHING COPY

template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, kBlocksPerSm)
    gemm_kernel(int m, int n, int k, const __grid_constant__ CUtensorMap a_map,
                const __grid_constant__ CUtensorMap b_map, bf16* d, int raster_group) {
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);
  auto& pipeline = shared.pipeline;
  auto& queue = shared.queue;

  // NEW in lesson 13: cluster c of the persistent grid walks its cluster tiles.
  const uint32_t rank = gemm::ptx::cluster_cta_rank();
  const PersistentClusterTiles<Tile> schedule{
      gemm::ptx::cluster_id_x(), gridDim.x / Tile::kClusterM,
      gemm::ceil_div(m, Tile::kBlockM * Tile::kClusterM), gemm::ceil_div(n, Tile::kBlockN),
      raster_group, gemm::ceil_div(k, kBlockK), rank};
  const int warpgroup = threadIdx.x / 128;

  // Thread 0 sets up the barriers (lessons 09 and 12; NEW in lesson 13: the work queue's, whose
  // items every consumer warp receives); the cluster barrier makes them visible to both blocks.
  if (threadIdx.x == 0) {
    gemm::ptx::prefetch_tensor_map(&a_map);
    gemm::ptx::prefetch_tensor_map(&b_map);
    queue.init(/*consumer_warps=*/Tile::kConsumers * 4);
    pipeline.init(/*consumer_warps=*/Tile::kConsumers * 4);
  }
  gemm::ptx::cluster_sync();

  if (warpgroup == 0) {
    // ---- Producer warpgroup: registers down; one thread posts every tile and loads it. ----
    gemm::ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) {
      // NEW in lesson 13: one ring for all of the cluster's tiles: the producer runs on into the
      // next tile as soon as stages are free, while the consumers still store the current one.
      auto write_state = gemm::PipelineState<Tile::kStages>::producer_start();
      auto post_state = gemm::PipelineState<kWorkQueueDepth>::producer_start();
      for (int64_t i = 0; i < schedule.count(); ++i) {
        const gemm::hopper::WorkItem item = schedule.item(i);
        queue.post(post_state, item);
        load_k_range_multicast<Tile>(pipeline, shared.ring, a_map, b_map, item.row0, item.col0,
                                     rank, item.k_begin, item.k_end, write_state);
      }
      queue.post(post_state, gemm::hopper::WorkItem{});  // no slices: the end of the work
      producer_tail(pipeline, write_state);  // lesson 12: before this block may exit
    }
    return;
  }

  // ---- Consumer warpgroups: registers up; each its rows of every tile (lesson 10). ----
  gemm::ptx::setmaxnreg_inc<kConsumerRegisters>();
  const int first_row = (warpgroup - 1) * Tile::kConsumerRows;
  float accumulator[Tile::kRowBlocks][Tile::kBlockN / 2];
  // NEW in lesson 13: the consumers take the tiles in the order the producer posts them; their
  // pipeline state carries on from tile to tile: the ring does not restart.
  auto read_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  auto receive_state = gemm::PipelineState<kWorkQueueDepth>::consumer_start();
  while (true) {
    const gemm::hopper::WorkItem item = queue.receive(receive_state);
    if (item.is_end()) break;
    const auto last_stage = mma_k_range<Tile>(pipeline, shared.ring, accumulator, first_row,
                                              item.k_begin, item.k_end, read_state);
    // The producer is already loading the next tile's first slices into the stages released so
    // far, while this one drains and stores.
    gemm::hopper::mma_drain(pipeline, accumulator, last_stage);
#pragma unroll
    for (int r = 0; r < Tile::kRowBlocks; ++r)
      store_rows(d, accumulator[r], item.row0 + first_row + r * Tile::kWarpgroupM, item.col0, m, n);
  }
}

// Runs the kernel with any tile configuration (the sweep drivers under profiles/ time others):
// RasterGroup is the band width of the grouped order, MaxClusters (when not 0) caps the grid below
// what fits on the GPU.
template <class Tile, int RasterGroup = 8, int MaxClusters = 0>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  const int64_t cluster_tiles = gemm::ceil_div<int64_t>(p.m, Tile::kBlockM * Tile::kClusterM) *
                                gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  // The tensor maps of A and B (lesson 08); B's box is what one block multicasts (lesson 12).
  const CUtensorMap a_map =
      gemm::make_tensor_map(args.a, gemm::kmajor_tile_map_args(p.m, p.k, Tile::kBlockM, kBlockK));
  const CUtensorMap b_map = gemm::make_tensor_map(
      args.b, gemm::kmajor_tile_map_args(p.n, p.k, Tile::kBSliceRows, kBlockK));
  // More than 48 KB of dynamic shared memory must be allowed explicitly, plus room to align the
  // storage to 1024 bytes.
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile>>(shared_bytes);
  // NEW in lesson 13: the persistent grid: as many clusters as can be resident at once on this
  // GPU (cudaOccupancyMaxActiveClusters: 66 of 2 blocks on an H100 SXM's 132 SMs), never more
  // than there are cluster tiles.
  int64_t clusters =
      gemm::resident_clusters<gemm_kernel<Tile>>(Tile::kClusterM, Tile::kThreads, shared_bytes);
  if (MaxClusters > 0) clusters = std::min<int64_t>(clusters, MaxClusters);
  clusters = std::min(clusters, cluster_tiles);
  gemm::launch_with_clusters(gemm_kernel<Tile>, unsigned(clusters * Tile::kClusterM),
                             Tile::kClusterM, Tile::kThreads, shared_bytes, gemm::Residency::any,
                             stream, int(p.m), int(p.n), int(p.k), a_map, b_map, args.d,
                             RasterGroup);
}

inline void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch_tile<DefaultTile>(args, stream);
}

// The launch as the harness takes it, planned: one launch function, nothing to choose.
using Launch = gemm::OneLaunch<&launch>;

inline constexpr gemm::Lesson kLesson{
    .min_arch = gemm::MinArch::sm90a,
    .plan = &Launch::plan,
    .launch_planned = &Launch::launch,
};

}  // namespace lesson13
