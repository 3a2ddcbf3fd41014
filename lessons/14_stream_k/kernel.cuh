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
// the same, bit for bit, from run to run. The remaining tiles stay whole, as in lesson 13.
// Graded instruction signature: HGMMA UTMALDG.2D.MULTICAST SYNCS.PHASECHK USETMAXREG
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/gemm.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/cluster.hpp"
#include "common/ptx/fence.hpp"
#include "common/ptx/mbarrier.hpp"
#include "common/ptx/memory_order.hpp"
#include "common/ptx/named_barrier.hpp"
#include "common/ptx/setmaxnreg.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/persistent.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/schedule/raster.hpp"
#include "common/schedule/stream_k.hpp"
#include "common/shared_memory.hpp"
#include "common/tensor_map.hpp"
#include "common/wgmma_descriptor.hpp"

namespace lesson14 {

using gemm::bf16;

constexpr int kBlockK = 64;  // K per shared-memory slice: rows of 128 bytes

// The tile is split among consumer warpgroups, each computing 64 full-width rows of it with
// wgmma.m64nNk16, N = BlockN (lesson 07).
template <int BlockM_, int BlockN_, int Stages_>
struct TileShape {
  static constexpr int kBlockM = BlockM_, kBlockN = BlockN_;  // the block's tile of D
  static constexpr int kWarpgroupM = 64;                      // rows of one wgmma (m64)
  // Warpgroup 0 produces, warpgroups 1 .. kConsumers consume (lesson 09).
  static constexpr int kConsumers = kBlockM / kWarpgroupM;
  static constexpr int kThreads = (1 + kConsumers) * 128;
  static constexpr int kMmaK = 16;                            // K of one wgmma
  static constexpr int kKSteps = kBlockK / kMmaK;             // 16-wide k-steps per slice
  static constexpr int kStages = Stages_;                     // slices in the shared-memory ring
  // The bytes TMA delivers per stage, A's tile and B's (lesson 08): into each block of the
  // cluster, half of B from its own load and half from its partner's (lesson 12).
  static constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK * int(sizeof(bf16));
  // Clusters of 2 blocks along M; each block loads and multicasts the rows
  // rank * kBHalfRows .. + kBHalfRows of the B tile (lesson 12).
  static constexpr int kClusterM = 2;
  static constexpr int kBHalfRows = kBlockN / kClusterM;
  // A consumer releases slice kt - 1 only after starting on slice kt: with one stage, slice kt
  // could never be loaded.
  static_assert(kStages >= 2, "the ring needs at least two stages");
};
// The configuration of lesson 10: 2 consumer warpgroups of 64 x 256 on a 128 x 256 tile, 4 stages.
using DefaultTile = TileShape<128, 256, 4>;

// The register budget (lesson 09). __launch_bounds__(384, 1) caps the kernel at 168 registers per
// thread (65536 / 384, rounded down to a multiple of 8), 64512 for the block. NEW in lesson 14:
// the producer now works out the Stream-K items, 64-bit arithmetic that does not fit in 40
// registers: it keeps 56, the consumers take 224 each: 128 x 56 + 256 x 224 = 64512.
constexpr int kProducerRegisters = 56;
constexpr int kConsumerRegisters = 224;

// The ring of slices, in dynamic shared memory (more than the 48 KB a block may declare statically).
// Every tile starts on a 1024-byte boundary (16 KB tiles, storage aligned by
// gemm::aligned_shared_storage), as the 128-byte swizzle of TMA and wgmma requires.
// NEW in lesson 14: a work item as the consumers need it (common/schedule/stream_k.hpp): where this
// block's tile lies, the k-range of the part, which part it is of how many, and its workspace
// slot. The producer works it out and hands it to the consumers in the stage of the item's first
// slice, so that the consumers, whose registers are full of accumulators, compute nothing.
// After the last item the producer posts one with no parts: the end of the work.
struct WorkItem {
  int row0, col0;         // this block's tile of D
  int k_begin, k_end;     // slices of the part
  int unit, units;        // part `unit` of the tile's `units` parts, in k order; 0 parts: the end
  int64_t slot;           // this block's workspace slot, for a tile cut into parts
};

template <class Tile>
struct SharedStorage {
  alignas(1024) bf16 a[Tile::kStages][Tile::kBlockM * kBlockK];
  alignas(1024) bf16 b[Tile::kStages][Tile::kBlockN * kBlockK];
  // One "full" barrier per stage. Its phase completes when the producer has arrived (once,
  // announcing kStageBytes) and all those bytes have landed (lesson 08).
  uint64_t full[Tile::kStages];
  // One "empty" barrier per stage (lessons 09 and 12). Its phase completes when every consumer
  // warp of BOTH blocks has arrived: this block's producer multicasts into the partner's stage
  // too, so it may refill the stage only when both have finished reading it.
  uint64_t empty[Tile::kStages];
  // NEW in lesson 14: the work item whose first slice the stage holds.
  WorkItem work[Tile::kStages];
};

// The four pipeline verbs of lesson 09 (named as in CUTLASS). A PipelineState is the
// {stage, phase} a role is at; each role advances its own once per slice.

// Producer: wait until the consumers have released the stage, then announce the bytes about to be
// loaded into it (this is the producer's one arrival on the full barrier). Its first pass through
// the ring must not wait: it starts on the opposite phase (PipelineState::producer_start()).
// NEW in lesson 14: at a work item's first slice (`post`), it writes the item into the stage
// first: its arrival, which releases the item to the consumers along with the stage, comes after.
template <class Tile>
__device__ inline void producer_acquire(SharedStorage<Tile>& shared,
                                        const gemm::PipelineState<Tile::kStages>& state,
                                        bool post, const WorkItem& item) {
  gemm::ptx::mbarrier_wait(&shared.empty[state.index], state.phase);
  if (post) shared.work[state.index] = item;
  gemm::ptx::mbarrier_arrive_expect_tx(&shared.full[state.index], Tile::kStageBytes);
}
// (producer_commit: nothing to do with TMA, whose bytes complete the full barrier by themselves.)

// NEW in lesson 14: the consumers' side of the hand-over: lane 0 of each warp reads the item
// from the stage and passes it to the other lanes with shuffles. Lane 0 is also the lane that
// tells the producer that the stage is free (consumer_release): no other lane reads the stage.
__device__ inline WorkItem receive_work_item(const WorkItem& posted) {
  WorkItem item{};
  if (threadIdx.x % 32 == 0) item = posted;
  item.row0 = __shfl_sync(0xffffffffu, item.row0, 0);
  item.col0 = __shfl_sync(0xffffffffu, item.col0, 0);
  item.k_begin = __shfl_sync(0xffffffffu, item.k_begin, 0);
  item.k_end = __shfl_sync(0xffffffffu, item.k_end, 0);
  item.unit = __shfl_sync(0xffffffffu, item.unit, 0);
  item.units = __shfl_sync(0xffffffffu, item.units, 0);
  item.slot = __shfl_sync(0xffffffffu, item.slot, 0);
  return item;
}

// NEW in lesson 14: the end of the work: a stage holding no slice, only the item "no parts". The
// producer's plain arrival, with no bytes to wait for, completes the stage's full barrier.
template <class Tile>
__device__ inline void producer_post_end(SharedStorage<Tile>& shared,
                                         gemm::PipelineState<Tile::kStages>& state) {
  gemm::ptx::mbarrier_wait(&shared.empty[state.index], state.phase);
  shared.work[state.index] = WorkItem{};
  gemm::ptx::mbarrier_arrive(&shared.full[state.index]);
  state.advance();
}

// Consumer: wait until the stage's bytes have landed.
template <class Tile>
__device__ inline void consumer_wait(SharedStorage<Tile>& shared,
                                     const gemm::PipelineState<Tile::kStages>& state) {
  gemm::ptx::mbarrier_wait(&shared.full[state.index], state.phase);
}

// Consumer: this warp no longer reads the stage; lane 0 arrives for the warp. Call it only after
// the wgmmas that read the stage are known to be complete (wgmma_wait_group).
// It arrives on the stage's empty barrier in EVERY block of the cluster (its own included),
// through the cluster address of each (mapa): both producers write into this block's stage, so
// both must hear that it is free (lesson 12). No cluster-wide fence precedes the arrival
// (common/ptx/cluster.hpp): the wgmma reads it vouches for are already complete.
template <class Tile>
__device__ inline void consumer_release(SharedStorage<Tile>& shared,
                                        const gemm::PipelineState<Tile::kStages>& state) {
  if (threadIdx.x % 32 != 0) return;
  const uint32_t empty = gemm::ptx::shared_address(&shared.empty[state.index]);
#pragma unroll
  for (uint32_t rank = 0; rank < Tile::kClusterM; ++rank)
    gemm::ptx::mbarrier_arrive_cluster(gemm::ptx::map_to_cluster_cta(empty, rank));
}

// The producer's last act (lesson 12). It waits, stage by stage, for the consumers' final
// releases (its own and the partner's): once they have all arrived, no consumer of the cluster
// will touch this block's barriers again.
template <class Tile>
__device__ inline void producer_tail(SharedStorage<Tile>& shared,
                                     gemm::PipelineState<Tile::kStages>& state) {
  for (int stage = 0; stage < Tile::kStages; ++stage) {
    gemm::ptx::mbarrier_wait(&shared.empty[state.index], state.phase);
    state.advance();
  }
}

// The wgmma descriptor of k-step `step` of a K-major, 128-byte swizzled tile
// (common/wgmma_descriptor.hpp): 16 elements along K are 32 bytes of the start address (lesson 07).
__device__ inline uint64_t tile_descriptor(const bf16* tile, int step) {
  return gemm::make_kmajor_sw128_descriptor(gemm::ptx::shared_address(tile) + step * 32);
}

// The first row and column of D of this block's part of a cluster tile (lesson 13). The
// scheduler works on cluster tiles (2 tile rows by 1 tile column, lesson 12): number `index` of
// the grouped order lies at cluster row `m`, tile column `n`, and the block of rank r takes tile
// row 2m + r.
struct TileOrigin {
  int row0, col0;
};
template <class Tile>
__device__ inline TileOrigin tile_origin(int64_t index, int64_t cluster_rows, int64_t tiles_n,
                                         int raster_group, uint32_t rank) {
  const gemm::TileCoordinates tile = gemm::grouped_tile(index, cluster_rows, tiles_n, raster_group);
  return {int((tile.m * Tile::kClusterM + rank) * Tile::kBlockM), int(tile.n * Tile::kBlockN)};
}

// NEW in lesson 14: the workspace where the parts of a split tile meet. For each block's tile of
// each Stream-K cluster tile: a flag (how many parts have added their partial sums so far) and
// the partial sums themselves, 128 x 256 fp32, laid out in the consumers' register order (a
// float4 of each of the 256 consumer threads, then the next float4), so that every access is a
// coalesced 16-byte load or store. The harness zeroes the workspace before every launch
// (Lesson::zeroed_workspace), outside the timed region: every flag starts at 0.
template <class Tile>
struct Workspace {
  static constexpr int kConsumerThreads = Tile::kConsumers * 128;
  static constexpr int64_t kTileFloats = int64_t(Tile::kBlockM) * Tile::kBlockN;
  uint32_t* flags;  // [slot]
  float* partials;  // [slot][kTileFloats]

  // The slot of this block's tile of Stream-K cluster tile `tile`.
  __host__ __device__ static int64_t slot(int64_t tile, uint32_t rank) {
    return tile * Tile::kClusterM + rank;
  }
  // The bytes for a plan: the flags, rounded up to 256 bytes, then the partial sums.
  static size_t flag_bytes(const gemm::StreamKPlan& plan) {
    return gemm::ceil_div<size_t>(size_t(plan.sk_tiles) * Tile::kClusterM * sizeof(uint32_t), 256) * 256;
  }
  static size_t bytes(const gemm::StreamKPlan& plan) {
    return flag_bytes(plan) + size_t(plan.sk_tiles) * Tile::kClusterM * kTileFloats * sizeof(float);
  }
};

// NEW in lesson 14: the fixup's synchronization, among the 256 consumer threads only (named
// barrier 1; barrier 0 is the whole block's and the producer does not take part).
constexpr uint32_t kConsumersBarrier = 1;

// Waits until `count` parts of the tile have added their partial sums: one thread reads the
// flag with acquire semantics until it holds `count`, then the consumers' barrier hands what it
// acquired (the other blocks' partial sums) to all of them.
template <class Tile>
__device__ inline void wait_for_parts(const uint32_t* flag, uint32_t count) {
  // BEGIN EXERCISE(wait_for_parts): one thread waits for the flag with acquire semantics, then
  //   the consumers' barrier passes on what it acquired
  if (threadIdx.x == 128)
    while (gemm::ptx::load_acquire_gpu(flag) != count) {
    }
  gemm::ptx::named_barrier_sync(kConsumersBarrier, Workspace<Tile>::kConsumerThreads);
  // END EXERCISE
}

// Announces that `count` parts have now added theirs: the barrier makes sure that every
// consumer thread has written its share, then one thread stores the flag with release semantics,
// which publishes all of those writes at GPU scope.
template <class Tile>
__device__ inline void publish_parts(uint32_t* flag, uint32_t count) {
  gemm::ptx::named_barrier_sync(kConsumersBarrier, Workspace<Tile>::kConsumerThreads);
  if (threadIdx.x == 128) gemm::ptx::store_release_gpu(flag, count);
}

template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, 1)
    gemm_kernel(int m, int n, const __grid_constant__ CUtensorMap a_map,
                const __grid_constant__ CUtensorMap b_map, bf16* d, int raster_group,
                const gemm::StreamKPlan plan, Workspace<Tile> workspace) {
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);

  // NEW in lesson 14: cluster c of the persistent grid is worker c of the Stream-K plan: its work
  // items are its Stream-K units (parts of tiles), then its whole tiles (common/schedule/
  // stream_k.hpp). Tile numbers are positions in the grouped order (lesson 13). Both blocks of a
  // cluster walk the same items, each its own tile row of every cluster tile.
  const int64_t tiles_n = gemm::ceil_div(n, Tile::kBlockN);
  const int64_t cluster_rows = gemm::ceil_div(m, Tile::kBlockM * Tile::kClusterM);
  const uint32_t rank = gemm::ptx::cluster_cta_rank();
  const int64_t cluster = gemm::ptx::cluster_id_x();
  const int warpgroup = threadIdx.x / 128;

  // Thread 0 sets up the barriers (lessons 08, 09 and 12): the empty barriers expect one arrival
  // per consumer warp of both blocks. The fence makes the initialization
  // visible to the async proxy and the cluster; the cluster barrier makes sure that the partner
  // has initialized ITS barriers before this block multicasts into them or arrives on them.
  if (threadIdx.x == 0) {
    gemm::ptx::prefetch_tensor_map(&a_map);
    gemm::ptx::prefetch_tensor_map(&b_map);
    for (int stage = 0; stage < Tile::kStages; ++stage) {
      gemm::ptx::mbarrier_init(&shared.full[stage], 1);
      gemm::ptx::mbarrier_init(&shared.empty[stage], Tile::kConsumers * 4 * Tile::kClusterM);
    }
    gemm::ptx::fence_mbarrier_init();
  }
  gemm::ptx::cluster_sync();

  // The roles (lesson 09). Each is one branch taken by whole warpgroups, as setmaxnreg
  // (warpgroup-wide) requires.
  if (warpgroup == 0) {
    // ---- Producer warpgroup: registers down to 40; one elected thread issues every load. ----
    gemm::ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) {
      // One ring for all of the cluster's work (lesson 13): the producer runs on into the next
      // item as soon as stages are free, while the consumers still finish the current one.
      auto write_state = gemm::PipelineState<Tile::kStages>::producer_start();
      const int64_t work_items = gemm::stream_k_work_count(plan, cluster);
      for (int64_t item = 0; item < work_items; ++item) {
        const gemm::StreamKWork work = gemm::stream_k_work(plan, cluster, item);
        const TileOrigin tile =
            tile_origin<Tile>(work.tile, cluster_rows, tiles_n, raster_group, rank);
        const WorkItem posted{tile.row0,      tile.col0,       int(work.k_begin),
                              int(work.k_end), int(work.unit), int(work.units),
                              Workspace<Tile>::slot(work.tile, rank)};
        // NEW in lesson 14: only the slices of this item's k-range.
        for (int slice = int(work.k_begin); slice < int(work.k_end); ++slice) {
          producer_acquire(shared, write_state, slice == work.k_begin, posted);
          uint64_t* full = &shared.full[write_state.index];
          gemm::ptx::tma_load_2d(shared.a[write_state.index], &a_map, full, slice * kBlockK,
                                 tile.row0);
          // Rows rank * 128 .. rank * 128 + 127 of the B tile, written into both blocks (mask
          // 0b11) at the same offset, counted on each block's full barrier (lesson 12).
          bf16* b_half = shared.b[write_state.index] + rank * Tile::kBHalfRows * kBlockK;
          const uint16_t both_blocks = (1u << Tile::kClusterM) - 1;
          gemm::ptx::tma_load_2d_multicast(b_half, &b_map, full, slice * kBlockK,
                                           tile.col0 + int(rank) * Tile::kBHalfRows, both_blocks);
          write_state.advance();
        }
      }
      producer_post_end(shared, write_state);
      producer_tail(shared, write_state);
    }
    // Every thread of both blocks meets at a cluster barrier before leaving (the consumers at the
    // end of the kernel): after it, no block reaches into the other (lesson 12).
    gemm::ptx::cluster_sync();
    return;
  }

  // ---- Consumer warpgroups: registers up to 232. ----
  gemm::ptx::setmaxnreg_inc<kConsumerRegisters>();
  // Consumer c (warpgroup c + 1) computes rows 64c .. 64c + 63 of the 128 x 256 tile, all 256
  // columns: 128 fp32 accumulators per thread (lesson 10).
  const int consumer = warpgroup - 1;
  float accumulator[Tile::kBlockN / 2];

  // The consumers walk the same items as the producer, in the same order; their pipeline state
  // carries on from item to item (lesson 13).
  auto read_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  while (true) {
    // NEW in lesson 14: the item arrives with its first slice; an item of no parts ends the work.
    consumer_wait(shared, read_state);
    const WorkItem work = receive_work_item(shared.work[read_state.index]);
    if (work.units == 0) {
      consumer_release(shared, read_state);
      break;
    }
    auto release_state = read_state;  // the oldest stage this warpgroup still reads
    for (int kt = work.k_begin; kt < work.k_end; ++kt) {
      consumer_wait(shared, read_state);

      // The slice's 4 k-steps as one batch of asynchronous wgmmas (lesson 07).
      const bf16* a_tile = shared.a[read_state.index] + consumer * Tile::kWarpgroupM * kBlockK;
      const bf16* b_tile = shared.b[read_state.index];
      // The first k-step of the item runs with scale-d = 0 (lesson 10): it overwrites what the
      // accumulators still hold from the previous item.
      const bool overwrite = kt == work.k_begin;
      gemm::ptx::warpgroup_fence_operand(accumulator);
      gemm::ptx::wgmma_fence();
#pragma unroll
      for (int step = 0; step < Tile::kKSteps; ++step)
        gemm::ptx::wgmma_m64k16_bf16<Tile::kBlockN>(accumulator, tile_descriptor(a_tile, step),
                                                    tile_descriptor(b_tile, step),
                                                    /*accumulate=*/!overwrite || step > 0);
      gemm::ptx::wgmma_commit_group();
      // Wait until at most ONE group is pending (lesson 09): this slice's wgmmas keep running
      // while the previous slice's are retired. Only now is the previous slice's stage known to
      // be no longer read: release it.
      gemm::ptx::wgmma_wait_group<1>();
      gemm::ptx::warpgroup_fence_operand(accumulator);
      if (kt > work.k_begin) {
        consumer_release(shared, release_state);
        release_state.advance();
      }
      read_state.advance();
    }
    // Drain: wait for the last group, then release its stage. The producer is already loading
    // the next item's first slices into the stages released so far.
    gemm::ptx::wgmma_wait_group<0>();
    gemm::ptx::warpgroup_fence_operand(accumulator);
    consumer_release(shared, release_state);

    // NEW in lesson 14: the fixup of a tile cut into parts. Part u (in the order of the k-ranges)
    // waits until parts 0 .. u - 1 have added theirs. Every part but the last then leaves the sum
    // so far in the workspace (part 0 writes its own sums, the others add theirs) and counts
    // itself; the last part adds the sum to its accumulators and stores the tile below.
    if (work.units > 1) {
      uint32_t* flag = workspace.flags + work.slot;
      float4* partial =
          reinterpret_cast<float4*>(workspace.partials + work.slot * Workspace<Tile>::kTileFloats) +
          (threadIdx.x - 128);
      // BEGIN EXERCISE(fixup): wait for the parts before this one, then either pass the sum on
      //   through the workspace, or (the last part) take it into the accumulators
      if (work.unit > 0) wait_for_parts<Tile>(flag, uint32_t(work.unit));
      // One float4 of each of the 256 consumer threads after the other: coalesced. .cg: through
      // L2, where the other SMs' writes are, never from this SM's L1.
      if (work.unit == work.units - 1) {
#pragma unroll
        for (int i = 0; i < Tile::kBlockN / 2 / 4; ++i) {
          const float4 before = __ldcg(partial + i * Workspace<Tile>::kConsumerThreads);
          accumulator[4 * i] += before.x;
          accumulator[4 * i + 1] += before.y;
          accumulator[4 * i + 2] += before.z;
          accumulator[4 * i + 3] += before.w;
        }
      } else {
#pragma unroll
        for (int i = 0; i < Tile::kBlockN / 2 / 4; ++i) {
          float4* cell = partial + i * Workspace<Tile>::kConsumerThreads;
          float4 sum = make_float4(accumulator[4 * i], accumulator[4 * i + 1],
                                   accumulator[4 * i + 2], accumulator[4 * i + 3]);
          if (work.unit > 0) {
            const float4 before = __ldcg(cell);
            sum = make_float4(before.x + sum.x, before.y + sum.y, before.z + sum.z, before.w + sum.w);
          }
          __stcg(cell, sum);
        }
        publish_parts<Tile>(flag, uint32_t(work.unit + 1));
        continue;  // the last part stores the tile
      }
      // END EXERCISE
    }

    // The epilogue follows wgmma's accumulator layout (lesson 07). Warp w of the warpgroup
    // holds rows 16w + lane / 4 and 16w + lane / 4 + 8 of its 64 rows; accumulators 4j .. 4j + 3
    // are columns 8j + 2 * (lane % 4) and the next one, in those two rows. N % 8 == 0 and the
    // column is even, so a pair is entirely inside D or outside.
    const int lane = threadIdx.x % 32;
    const int warp_in_group = (threadIdx.x % 128) / 32;
    const int row = work.row0 + consumer * Tile::kWarpgroupM + warp_in_group * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < Tile::kBlockN / 8; ++j) {
      const int column = work.col0 + j * 8 + (lane % 4) * 2;
      if (column >= n) continue;
      const float* values = &accumulator[4 * j];
      if (row < m)
        *reinterpret_cast<__nv_bfloat162*>(d + int64_t(row) * n + column) =
            __floats2bfloat162_rn(values[0], values[1]);
      if (row + 8 < m)
        *reinterpret_cast<__nv_bfloat162*>(d + int64_t(row + 8) * n + column) =
            __floats2bfloat162_rn(values[2], values[3]);
    }
  }
  // The consumers' side of the final cluster barrier (lesson 12). Their last releases, which
  // arrive on the partner's barriers, happened before it.
  gemm::ptx::cluster_sync();
}

// NEW in lesson 14: the Stream-K plan of a problem on this GPU: its cluster tiles, k-iterations
// (slices) per tile, and as many workers as clusters can be resident at once, which every
// worker must be: a part waits for parts of other clusters, so all of them must be running.
template <class Tile, bool Reverse>
gemm::StreamKPlan plan_for(const gemm::GemmProblem& p) {
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile>>(shared_bytes);
  const int64_t clusters =
      gemm::resident_clusters<gemm_kernel<Tile>>(Tile::kClusterM, Tile::kThreads, shared_bytes);
  const int64_t cluster_tiles = gemm::ceil_div<int64_t>(p.m, Tile::kBlockM * Tile::kClusterM) *
                                gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  return gemm::plan_stream_k(cluster_tiles, clusters, gemm::ceil_div<int64_t>(p.k, kBlockK), Reverse);
}

// Runs the kernel with any tile configuration (the sweep drivers under profiles/ time others):
// RasterGroup is the band width of the grouped order, Reverse the order of a cluster's Stream-K
// parts (from its last tile to its first, or the other way).
template <class Tile, int RasterGroup = 8, bool Reverse = true>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  // The tensor maps of A and B (lesson 08), built on the host and passed by value. B's box is
  // half a tile, kBHalfRows rows: what one block multicasts (lesson 12).
  const CUtensorMap a_map =
      gemm::make_tensor_map(args.a, gemm::kmajor_tile_map_args(p.m, p.k, Tile::kBlockM, kBlockK));
  const CUtensorMap b_map = gemm::make_tensor_map(
      args.b, gemm::kmajor_tile_map_args(p.n, p.k, Tile::kBHalfRows, kBlockK));
  // More than 48 KB of dynamic shared memory must be allowed explicitly, plus room to align the
  // storage to 1024 bytes.
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile>>(shared_bytes);
  // NEW in lesson 14: one cluster per worker of the plan: all the clusters that fit when Stream-K
  // is used, no more than there are tiles when it is not.
  const gemm::StreamKPlan plan = plan_for<Tile, Reverse>(p);
  Workspace<Tile> workspace;
  workspace.flags = static_cast<uint32_t*>(args.workspace);
  workspace.partials = reinterpret_cast<float*>(static_cast<unsigned char*>(args.workspace) +
                                                Workspace<Tile>::flag_bytes(plan));
  gemm::launch_with_clusters(gemm_kernel<Tile>, unsigned(plan.workers * Tile::kClusterM),
                             Tile::kClusterM, Tile::kThreads, shared_bytes, stream, int(p.m),
                             int(p.n), a_map, b_map, args.d, RasterGroup, plan, workspace);
}

// NEW in lesson 14: the workspace this lesson needs for a problem: a flag and a tile of fp32
// partial sums per block tile of the Stream-K part (none for a data-parallel plan).
template <class Tile, bool Reverse = true>
size_t workspace_bytes_tile(const gemm::GemmProblem& problem) {
  return Workspace<Tile>::bytes(plan_for<Tile, Reverse>(problem));
}

inline void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch_tile<DefaultTile>(args, stream);
}

inline size_t workspace_bytes(const gemm::GemmProblem& problem) {
  return workspace_bytes_tile<DefaultTile>(problem);
}

inline constexpr gemm::Lesson kLesson{
    .id = 14,
    .parent = 13,
    .slug = "stream_k",
    .title = "Stream-K: the last wave's tiles cut along K and shared by every cluster",
    .launch = &launch,
    .workspace_bytes = &workspace_bytes,
    .min_arch = gemm::MinArch::sm90a,
    .zeroed_workspace = true,
};

}  // namespace lesson14
