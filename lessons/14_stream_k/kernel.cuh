// Lesson 14: Stream-K: the k-iterations of the last wave's tiles shared out among all clusters.
//
// Lesson 13's persistent clusters take whole tiles. When the tile count lands just past a multiple
// of the cluster count, the last round has a few tiles for 66 clusters, and most of the GPU idles
// while those few finish. 4224^3 has 289 cluster tiles: 4 full rounds, then 25 tiles on 66
// clusters, 62% of the GPU idle for a whole tile's time. Here the tail (plus one full round) is
// cut along K instead: every cluster gets the same number of k-iterations of those tiles, a
// contiguous range that may end part-way through one tile and start part-way through another
// (common/schedule/stream_k.hpp). The parts of a tile meet in a workspace: each part but the last
// leaves its fp32 partial sums there, in the order of the k-ranges, and the part that holds the
// tile's last k-iteration adds them up and stores the tile. The order is fixed, so the result is
// the same, bit for bit, from run to run. The remaining tiles stay whole, as in lesson 13. Only
// the scheduler changes, and the fixup joins the consumers' loop: the producer's and consumers'
// loops over a k-range (lessons 09 and 12) run a part of a tile as they run a whole one.
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
#include "common/hopper/named_barriers.hpp"
#include "common/hopper/pipeline.hpp"
#include "common/hopper/producer_tail.hpp"
#include "common/hopper/store_rows.hpp"
#include "common/hopper/stream_k_workspace.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/hopper/work_queue.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/cluster.hpp"
#include "common/ptx/memory_order.hpp"
#include "common/ptx/named_barrier.hpp"
#include "common/ptx/setmaxnreg.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/schedule/stream_k.hpp"
#include "common/shared_memory.hpp"
#include "common/tensor_map.hpp"

namespace lesson14 {

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

// The register budget (lesson 10). NEW in lesson 14: the producer now works out the Stream-K work
// items, 64-bit arithmetic that does not fit in lesson 13's producer budget: it keeps
// kProducerRegisters, and the consumers take the rest (gemm::hopper::consumer_registers).
constexpr int kProducerRegisters = 56;
constexpr int kConsumerRegisters =
    gemm::hopper::consumer_registers(DefaultTile::kThreads, kBlocksPerSm, kProducerRegisters);

constexpr int kWorkQueueDepth = 2;  // lesson 13

template <class Tile>
struct SharedStorage {
  gemm::hopper::OperandRing<Tile> ring;
  ClusterTmaPipeline<Tile::kStages, Tile::kClusterM> pipeline;  // of a cluster (lesson 12)
  gemm::hopper::WorkQueue<kWorkQueueDepth> queue;                     // lesson 13
};

// NEW in lesson 14: the fixup of a tile cut into parts, in the workspace of
// common/hopper/stream_k_workspace.hpp, among the consumer threads only (named barrier
// kConsumersBarrier: the producer does not take part).
// BEGIN TEACHING COPY(stream_k_fixup)
// Waits until `count` parts of the tile have added their partial sums: one thread reads the flag
// with acquire semantics until it holds `count`, then the consumers' barrier hands what it
// acquired (the other blocks' partial sums) to all of them.
template <class Tile>
__device__ inline void wait_for_parts(const uint32_t* flag, uint32_t count) {
  // BEGIN EXERCISE(wait_for_parts): one thread waits for the flag with acquire semantics, then
  //   the consumers' barrier passes on what it acquired
  if (threadIdx.x == 128)
    while (gemm::ptx::load_acquire_gpu(flag) != count) {
    }
  gemm::ptx::named_barrier_sync(gemm::hopper::kConsumersBarrier,
                                gemm::hopper::StreamKWorkspace<Tile>::kConsumerThreads);
  // END EXERCISE
}

// Announces that `count` parts have now added theirs: the barrier makes sure that every consumer
// thread has written its share, then one thread stores the flag with release semantics, which
// publishes all of those writes at GPU scope (release is cumulative).
template <class Tile>
__device__ inline void publish_parts(uint32_t* flag, uint32_t count) {
  gemm::ptx::named_barrier_sync(gemm::hopper::kConsumersBarrier,
                                gemm::hopper::StreamKWorkspace<Tile>::kConsumerThreads);
  if (threadIdx.x == 128) gemm::ptx::store_release_gpu(flag, count);
}

// The fixup of one work item, called by every consumer thread after its MMAs: whether this part
// stores the tile. A whole tile stores itself. Of a tile cut into parts, part u (in the order of
// the k-ranges) waits until parts 0 .. u - 1 have added theirs; every part but the last then
// leaves the sum so far in the workspace (part 0 writes its own sums, the others add theirs) and
// counts itself; the last part resets the flag, adds the sum to its accumulators and stores the
// tile. The order is fixed, so the result is the same, bit for bit, from run to run.
template <class Tile>
__device__ inline bool stream_k_fixup(const gemm::hopper::StreamKWorkspace<Tile>& workspace,
                                      const gemm::hopper::WorkItem& item,
                                      float (&accumulator)[Tile::kRowBlocks][Tile::kBlockN / 2]) {
  using Workspace = gemm::hopper::StreamKWorkspace<Tile>;
  // BEGIN EXERCISE(fixup, returns): a whole tile stores itself; a part of a tile waits for the
  //   parts before it, then either passes the sum on through the workspace (and says that it does
  //   not store the tile), or (the last part) resets the flag and takes the sum into the
  //   accumulators
  if (item.units == 1) return true;
  uint32_t* flag = workspace.flags + item.slot;
  // This thread's float4s of the tile's partial sums: its i-th is at partial[i * kConsumerThreads].
  float4* partial = reinterpret_cast<float4*>(workspace.partials + item.slot * Workspace::kTileFloats) +
                    (threadIdx.x - 128);
  constexpr int kFloat4s = Tile::kBlockN / 2 / 4;  // per 64-row block of accumulators
  if (item.unit > 0) wait_for_parts<Tile>(flag, uint32_t(item.unit));
  // .cg: through L2, where the other SMs' writes are, never from this SM's L1.
  if (item.unit == item.units - 1) {
    // Every other part has counted itself, and nothing reads the flag again in this launch: leave
    // it as the next launch needs it, 0. A workspace zeroed once then stays ready.
    if (threadIdx.x == 128) *flag = 0;
#pragma unroll
    for (int r = 0; r < Tile::kRowBlocks; ++r)
#pragma unroll
      for (int i = 0; i < kFloat4s; ++i) {
        const float4 before = __ldcg(partial + (r * kFloat4s + i) * Workspace::kConsumerThreads);
        accumulator[r][4 * i] += before.x;
        accumulator[r][4 * i + 1] += before.y;
        accumulator[r][4 * i + 2] += before.z;
        accumulator[r][4 * i + 3] += before.w;
      }
    return true;
  }
#pragma unroll
  for (int r = 0; r < Tile::kRowBlocks; ++r)
#pragma unroll
    for (int i = 0; i < kFloat4s; ++i) {
      float4* cell = partial + (r * kFloat4s + i) * Workspace::kConsumerThreads;
      float4 sum = make_float4(accumulator[r][4 * i], accumulator[r][4 * i + 1],
                               accumulator[r][4 * i + 2], accumulator[r][4 * i + 3]);
      if (item.unit > 0) {
        const float4 before = __ldcg(cell);
        sum = make_float4(before.x + sum.x, before.y + sum.y, before.z + sum.z, before.w + sum.w);
      }
      __stcg(cell, sum);
    }
  publish_parts<Tile>(flag, uint32_t(item.unit + 1));
  return false;
  // END EXERCISE
}
// END TEACHING COPY

template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, kBlocksPerSm)
    gemm_kernel(int m, int n, const __grid_constant__ CUtensorMap a_map,
                const __grid_constant__ CUtensorMap b_map, bf16* d, int raster_group,
                const gemm::StreamKPlan plan, gemm::hopper::StreamKWorkspace<Tile> workspace) {
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);
  auto& pipeline = shared.pipeline;
  auto& queue = shared.queue;

  // NEW in lesson 14: cluster c of the persistent grid is worker c of the Stream-K plan: its work
  // items are its Stream-K parts of tiles, then its whole tiles
  // (common/hopper/stream_k_workspace.hpp).
  const uint32_t rank = gemm::ptx::cluster_cta_rank();
  const gemm::hopper::StreamKWorkItems<Tile> schedule{
      plan, gemm::ptx::cluster_id_x(), gemm::ceil_div(m, Tile::kBlockM * Tile::kClusterM),
      gemm::ceil_div(n, Tile::kBlockN), raster_group, rank};
  const int warpgroup = threadIdx.x / 128;

  // Thread 0 sets up the barriers (lessons 09, 12 and 13); the cluster barrier makes them visible
  // to both blocks.
  if (threadIdx.x == 0) {
    gemm::ptx::prefetch_tensor_map(&a_map);
    gemm::ptx::prefetch_tensor_map(&b_map);
    queue.init(/*consumer_warps=*/Tile::kConsumers * 4);
    pipeline.init(/*consumer_warps=*/Tile::kConsumers * 4);
  }
  gemm::ptx::cluster_sync();

  if (warpgroup == 0) {
    // ---- Producer warpgroup: registers down; one thread posts every work item and loads it. ----
    gemm::ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) {
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

  // ---- Consumer warpgroups: registers up; each its rows of every item (lesson 10). ----
  gemm::ptx::setmaxnreg_inc<kConsumerRegisters>();
  const int first_row = (warpgroup - 1) * Tile::kConsumerRows;
  float accumulator[Tile::kRowBlocks][Tile::kBlockN / 2];
  auto read_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  auto receive_state = gemm::PipelineState<kWorkQueueDepth>::consumer_start();
  while (true) {
    const gemm::hopper::WorkItem item = queue.receive(receive_state);
    if (item.is_end()) break;
    const auto last_stage = mma_k_range<Tile>(pipeline, shared.ring, accumulator, first_row,
                                              item.k_begin, item.k_end, read_state);
    gemm::hopper::mma_drain(pipeline, accumulator, last_stage);
    // NEW in lesson 14: a part of a tile meets the others; only the last one stores the tile.
    if (!stream_k_fixup<Tile>(workspace, item, accumulator)) continue;
#pragma unroll
    for (int r = 0; r < Tile::kRowBlocks; ++r)
      store_rows(d, accumulator[r], item.row0 + first_row + r * Tile::kWarpgroupM, item.col0, m, n);
  }
}

// NEW in lesson 14: the Stream-K plan of a problem on this GPU: its cluster tiles, k-iterations
// (slices) per tile, and as many workers as clusters can be resident at once, which every
// worker must be: a part waits for parts of other clusters, so all of them must be running (the
// launch asks for that: gemm::Residency::all_at_once).
template <class Tile, bool Reverse>
gemm::StreamKPlan plan_for(const gemm::GemmProblem& p) {
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile>>(shared_bytes);
  const int64_t clusters =
      gemm::resident_clusters<gemm_kernel<Tile>>(Tile::kClusterM, Tile::kThreads, shared_bytes);
  const int64_t cluster_tiles = gemm::ceil_div<int64_t>(p.m, Tile::kBlockM * Tile::kClusterM) *
                                gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  return gemm::plan_stream_k(cluster_tiles, clusters, gemm::ceil_div<int64_t>(p.k, kBlockK),
                             Reverse);
}

// Runs the kernel with any tile configuration (the sweep drivers under profiles/ time others):
// RasterGroup is the band width of the grouped order, Reverse the order of a cluster's Stream-K
// parts (from its last tile to its first, or the other way).
template <class Tile, int RasterGroup = 8, bool Reverse = true>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  // The tensor maps of A and B (lesson 08); B's box is what one block multicasts (lesson 12).
  const CUtensorMap a_map =
      gemm::make_tensor_map(args.a, gemm::kmajor_tile_map_args(p.m, p.k, Tile::kBlockM, kBlockK));
  const CUtensorMap b_map = gemm::make_tensor_map(
      args.b, gemm::kmajor_tile_map_args(p.n, p.k, Tile::kBSliceRows, kBlockK));
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  // NEW in lesson 14: one cluster per worker of the plan: all the clusters that fit when Stream-K
  // is used, no more than there are tiles when it is not; all of them running at once.
  const gemm::StreamKPlan plan = plan_for<Tile, Reverse>(p);
  const auto workspace = gemm::hopper::StreamKWorkspace<Tile>::in(args.workspace, plan);
  gemm::launch_with_clusters(gemm_kernel<Tile>, unsigned(plan.workers * Tile::kClusterM),
                             Tile::kClusterM, Tile::kThreads, shared_bytes,
                             gemm::Residency::all_at_once, stream, int(p.m), int(p.n), a_map,
                             b_map, args.d, RasterGroup, plan, workspace);
}

// NEW in lesson 14: the workspace this lesson needs for a problem: a flag and a tile of fp32
// partial sums per block tile of the Stream-K part (none for a data-parallel plan).
template <class Tile, bool Reverse = true>
size_t workspace_bytes_tile(const gemm::GemmProblem& problem) {
  return gemm::hopper::StreamKWorkspace<Tile>::bytes(plan_for<Tile, Reverse>(problem));
}

// NEW in lesson 14: the part of that workspace that every launch must find zero and leave zero:
// the flags, which the harness checks after a launch.
template <class Tile, bool Reverse = true>
size_t workspace_flag_bytes_tile(const gemm::GemmProblem& problem) {
  return gemm::hopper::StreamKWorkspace<Tile>::flag_bytes(plan_for<Tile, Reverse>(problem));
}

inline void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch_tile<DefaultTile>(args, stream);
}

inline size_t workspace_bytes(const gemm::GemmProblem& problem) {
  return workspace_bytes_tile<DefaultTile>(problem);
}

inline size_t workspace_flag_bytes(const gemm::GemmProblem& problem) {
  return workspace_flag_bytes_tile<DefaultTile>(problem);
}

// The launch as the harness takes it, planned: one launch function, nothing to choose, and the
// workspace with its flags.
using Launch = gemm::OneLaunch<&launch, &workspace_bytes, &workspace_flag_bytes>;

inline constexpr gemm::Lesson kLesson{
    .min_arch = gemm::MinArch::sm90a,
    // NEW in lesson 14: every flag starts at 0, and the last part of each tile sets its flag back
    // to 0 (stream_k_fixup): the harness zeroes the workspace once, when it allocates it, and a
    // caller's launches pay for nothing else.
    .zeroed_workspace = true,
    .workspace_resets_itself = true,
    .plan = &Launch::plan,
    .launch_planned = &Launch::launch,
};

}  // namespace lesson14
