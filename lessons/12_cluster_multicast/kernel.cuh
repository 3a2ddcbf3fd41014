// Lesson 12: thread-block clusters with TMA multicast: two CTAs share one load of B.
//
// In lesson 10 every block fetches its own copy of each slice from L2: 16 KB of A and 32 KB of B.
// Blocks that compute vertically adjacent tiles (same columns of D, consecutive rows) need
// exactly the same B. Here two such blocks form a cluster: they are launched together on
// neighbouring SMs, and each can write into the other's shared memory and arrive on the other's
// barriers. Each block loads HALF of the B slice with a multicast TMA, which writes it into the
// shared memory of both blocks; so B crosses from L2 once per cluster instead of once per block,
// and a block's traffic per slice falls from 48 KB to 32 KB. In exchange, the two blocks' rings
// are coupled: a stage may be refilled only when the consumers of BOTH blocks have released it,
// and no block may exit while a consumer of the other can still arrive on its barriers.
// Graded instruction signature: HGMMA UTMALDG.2D.MULTICAST SYNCS.PHASECHK USETMAXREG
#pragma once

#include <cstdint>

#include "common/gemm.hpp"
#include "common/hopper/cluster_tile.hpp"
#include "common/hopper/consumer.hpp"
#include "common/hopper/mma_k_range.hpp"
#include "common/hopper/pipeline.hpp"
#include "common/hopper/store_rows.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/cluster.hpp"
#include "common/ptx/mbarrier.hpp"
#include "common/ptx/setmaxnreg.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/persistent.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/shared_memory.hpp"
#include "common/tensor_map.hpp"

namespace lesson12 {

using gemm::bf16;
using gemm::hopper::kBlockK;  // K per shared-memory slice: rows of 128 bytes
using gemm::taught::mma_k_range;  // lesson 09's consumer loop
using gemm::taught::store_rows;   // lesson 07's epilogue

// The configuration of lesson 10, NEW in lesson 12: in clusters of 2 blocks along M, each of
// which loads and multicasts kBSliceRows = 128 of the B tile's 256 rows.
using DefaultTile = gemm::hopper::TileShape<128, 256, 4, /*Consumers=*/2, /*ClusterM=*/2>;
constexpr int kBlocksPerSm = 1;

// The register budget (lesson 10): kProducerRegisters for the producer, the rest for the consumers.
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters =
    gemm::hopper::consumer_registers(DefaultTile::kThreads, kBlocksPerSm, kProducerRegisters);

// NEW in lesson 12: the pipeline of a cluster. Every producer of the cluster multicasts into
// every block's stage, so a stage may be refilled only when the consumers of EVERY block have
// released it: each stage's empty barrier expects the consumer warps of all kClusterM blocks, and
// a consumer warp releases the stage in every block, through the cluster address of each (mapa).
// BEGIN TEACHING COPY(ClusterTmaPipeline)
// The producer's verbs are lesson 09's; the consumers' release reaches every block. The
// arrival needs no cluster-wide fence before it (common/ptx/cluster.hpp): the wgmma reads it
// vouches for are already complete.
template <int Stages, int ClusterSize>
struct ClusterTmaPipeline : gemm::hopper::TmaPipeline<Stages> {
  using Base = gemm::hopper::TmaPipeline<Stages>;
  using State = typename Base::State;

  // `consumer_warps`: the warps of ONE block that release each stage.
  __device__ void init(int consumer_warps) { Base::init(consumer_warps * ClusterSize); }

  __device__ void consumer_release(const State& state) {
    // BEGIN EXERCISE(cluster_release): lane 0 tells the producer of every block of the cluster
    //   (its own included) that this warp no longer reads the stage
    if (threadIdx.x % 32 != 0) return;
    const uint32_t barrier = gemm::ptx::shared_address(&this->empty[state.index]);
#pragma unroll
    for (uint32_t rank = 0; rank < uint32_t(ClusterSize); ++rank)
      gemm::ptx::mbarrier_arrive_cluster(gemm::ptx::map_to_cluster_cta(barrier, rank));
    // END EXERCISE
  }
};
// END TEACHING COPY

template <class Tile>
struct SharedStorage {
  gemm::hopper::OperandRing<Tile> ring;
  ClusterTmaPipeline<Tile::kStages, Tile::kClusterM> pipeline;  // NEW in lesson 12
};

// NEW in lesson 12: the producer's loop with B multicast.
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
    // The stage's full barrier counts all its bytes: A's tile from this block's load, and the
    // kClusterM slices of B's tile from the loads of every block of the cluster.
    pipeline.producer_acquire(state, stage_bytes);
    uint64_t* full = pipeline.full_barrier(state);
    gemm::ptx::tma_load_2d(ring.a[state.index], &a_map, full, slice * Tile::kBlockK, row0);
    // BEGIN EXERCISE(multicast_b): load this block's slice of the B tile into the same place in
    //   every block of the cluster, counted on each block's full barrier
    // Rows rank * kBSliceRows .. + kBSliceRows of the B tile, written into every block (mask
    // 0b11) at the same offset.
    bf16* b_slice = ring.b[state.index] + rank * Tile::kBSliceRows * Tile::kBlockK;
    const uint16_t every_block = (1u << Tile::kClusterM) - 1;
    gemm::ptx::tma_load_2d_multicast(b_slice, &b_map, full, slice * Tile::kBlockK,
                                     col0 + int(rank) * Tile::kBSliceRows, every_block);
    // END EXERCISE
    state.advance();
  }
}
// END TEACHING COPY

// NEW in lesson 12: the producer's last act, as CUTLASS calls it. The consumers of the whole
// cluster arrive on this block's empty barriers until their very last slice; a block that exits
// before the last of those arrivals leaves its partner arriving on barriers that no longer exist.
// BEGIN TEACHING COPY(producer_tail)
// `state` is where the producer stopped: the stage it would fill next. The consumers' last
// releases of the cluster arrive on this block's empty barriers, one round of the ring after the
// producer's last acquires; waiting for that round of every stage means no consumer of the cluster
// will reach into this block's shared memory again.
template <class Pipeline>
__device__ inline void producer_tail(Pipeline& pipeline, typename Pipeline::State& state) {
  for (int stage = 0; stage < Pipeline::kStages; ++stage) {
    gemm::ptx::mbarrier_wait(&pipeline.empty[state.index], state.phase);
    state.advance();
  }
}
// END TEACHING COPY

template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, kBlocksPerSm)
    gemm_kernel(int m, int n, int k, const __grid_constant__ CUtensorMap a_map,
                const __grid_constant__ CUtensorMap b_map, bf16* d) {
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);
  auto& pipeline = shared.pipeline;

  // NEW in lesson 12: cluster c computes cluster tile c, in row-major order: the pair of tile rows
  // 2 (c / tiles_n) and 2 (c / tiles_n) + 1 of tile column c % tiles_n; the block of rank r takes
  // the first of them plus r (common/hopper/cluster_tile.hpp). Both blocks need the same B tile.
  const int tiles_n = gemm::ceil_div(n, Tile::kBlockN);
  const uint32_t rank = gemm::ptx::cluster_cta_rank();
  const gemm::hopper::TileOrigin tile = gemm::hopper::cluster_tile_origin<Tile>(
      gemm::row_major_tile(gemm::ptx::cluster_id_x(), tiles_n), rank);
  const int k_slices = gemm::ceil_div(k, kBlockK);
  const int warpgroup = threadIdx.x / 128;

  // Thread 0 sets up the barriers (lessons 09 and 10). NEW in lesson 12: the cluster barrier
  // makes sure that the partner has initialized ITS barriers before this block multicasts into
  // them or arrives on them (the fence in init made the initialization visible to the cluster).
  if (threadIdx.x == 0) {
    gemm::ptx::prefetch_tensor_map(&a_map);
    gemm::ptx::prefetch_tensor_map(&b_map);
    pipeline.init(/*consumer_warps=*/Tile::kConsumers * 4);
  }
  gemm::ptx::cluster_sync();

  // The roles (lesson 09), one branch per warpgroup.
  if (warpgroup == 0) {
    // ---- Producer warpgroup: registers down; one elected thread issues every load. ----
    gemm::ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) {
      auto write_state = gemm::PipelineState<Tile::kStages>::producer_start();
      load_k_range_multicast<Tile>(pipeline, shared.ring, a_map, b_map, tile.row0, tile.col0, rank,
                                   0, k_slices, write_state);
      // NEW in lesson 12: this block may exit only when no consumer of the cluster will arrive on
      // its barriers again; the producer thread waits for that, and the block lives until it is
      // done. (The multicasts INTO this block need no such wait: its consumers wait for every
      // byte of them on their full barriers before they finish.)
      producer_tail(pipeline, write_state);
    }
    return;
  }

  // ---- Consumer warpgroups: registers up; each its rows of the tile (lesson 10). ----
  gemm::ptx::setmaxnreg_inc<kConsumerRegisters>();
  const int first_row = (warpgroup - 1) * Tile::kConsumerRows;
  float accumulator[Tile::kRowBlocks][Tile::kBlockN / 2];
  auto read_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  const auto last_stage =
      mma_k_range<Tile>(pipeline, shared.ring, accumulator, first_row, 0, k_slices, read_state);
  gemm::hopper::mma_drain(pipeline, accumulator, last_stage);

  // The epilogue of lesson 07. At a ragged M the rows of rank 1's tile may lie below D: it
  // computed on TMA's zeros for its partner's sake, and stores nothing.
#pragma unroll
  for (int r = 0; r < Tile::kRowBlocks; ++r)
    store_rows(d, accumulator[r], tile.row0 + first_row + r * Tile::kWarpgroupM, tile.col0, m, n);
}

// Runs the kernel with any tile configuration (the sweep drivers under profiles/ time others).
template <class Tile>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  // NEW in lesson 12: one cluster per pair of tile rows (rounded up) and tile column.
  const int64_t clusters = gemm::ceil_div<int64_t>(p.m, Tile::kBlockM * Tile::kClusterM) *
                           gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  // The tensor maps of A and B (lesson 08). NEW in lesson 12: B's box is the slice of the B tile
  // that one block multicasts, kBSliceRows rows.
  const CUtensorMap a_map =
      gemm::make_tensor_map(args.a, gemm::kmajor_tile_map_args(p.m, p.k, Tile::kBlockM, kBlockK));
  const CUtensorMap b_map = gemm::make_tensor_map(
      args.b, gemm::kmajor_tile_map_args(p.n, p.k, Tile::kBSliceRows, kBlockK));
  // More than 48 KB of dynamic shared memory must be allowed explicitly, plus room to align the
  // storage to 1024 bytes.
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile>>(shared_bytes);
  // NEW in lesson 12: a cluster launch, after checking that a cluster fits on this GPU at all
  // (a clear error, not a failed launch, if it does not).
  gemm::resident_clusters<gemm_kernel<Tile>>(Tile::kClusterM, Tile::kThreads, shared_bytes);
  gemm::launch_with_clusters(gemm_kernel<Tile>, unsigned(clusters * Tile::kClusterM),
                             Tile::kClusterM, Tile::kThreads, shared_bytes, gemm::Residency::any,
                             stream, int(p.m), int(p.n), int(p.k), a_map, b_map, args.d);
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

}  // namespace lesson12
