// Lesson 15: the epilogue through shared memory and TMA stores, with the fused epilogue.
//
// Until now each consumer thread wrote its accumulators to D itself: 128 stores of 4 bytes per
// thread, to 2 rows x 8 columns scattered over 64 rows, while the tensor cores waited. Here the
// consumers write their tile into shared memory instead, with stmatrix (8 x 8 blocks of bf16 from
// the accumulator registers, in the 128-byte swizzle that TMA uses), one 64 x 64 subtile at a
// time, and one thread hands each subtile to a TMA store, which copies it to D in the background
// and clips whatever lies outside D. The consumers go on to the next subtile, and after the last
// one straight into the next tile's main loop while the stores drain: the epilogue of tile i
// overlaps the MMAs of tile i + 1.
//
// The same epilogue computes D = act(alpha * A * B^T + beta * C + bias) in registers before the
// conversion to bf16, with the activation chosen at compile time, so the plain product pays for
// none of it.
// Graded instruction signature: HGMMA UTMALDG.2D.MULTICAST UTMASTG STSM USETMAXREG
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/activation.hpp"
#include "common/gemm.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/cluster.hpp"
#include "common/ptx/fence.hpp"
#include "common/ptx/mbarrier.hpp"
#include "common/ptx/memory_order.hpp"
#include "common/ptx/named_barrier.hpp"
#include "common/ptx/setmaxnreg.hpp"
#include "common/ptx/stmatrix.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/persistent.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/schedule/raster.hpp"
#include "common/schedule/stream_k.hpp"
#include "common/shared_memory.hpp"
#include "common/tensor_map.hpp"
#include "common/wgmma_descriptor.hpp"

namespace lesson15 {

using gemm::bf16;

constexpr int kBlockK = 64;  // K per shared-memory slice: rows of 128 bytes

// The tile is split among consumer warpgroups, each computing 64 full-width rows of it with
// wgmma.m64nNk16, N = BlockN (lesson 07).
template <int BlockM_, int BlockN_, int Stages_, int EpilogueBuffers_ = 2>
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
  // NEW in lesson 15: the epilogue's subtiles: 64 rows (one consumer's) by 64 columns (128 bytes:
  // the widest box the 128-byte swizzle allows), kEpilogueBuffers of them per consumer, so that
  // one can be filled while the TMA store of another still reads it.
  static constexpr int kSubtileRows = kWarpgroupM, kSubtileColumns = 64;
  static constexpr int kSubtiles = kBlockN / kSubtileColumns;  // per consumer and tile
  static constexpr int kEpilogueBuffers = EpilogueBuffers_;
};
// The configuration: lesson 10's 128 x 256 tile with 4 stages (192 KB), and two 8 KB subtile
// buffers per consumer (32 KB): 224 KB of the 227 KB a block may use. The README measures 1 and 2
// buffers and 3 stages.
using DefaultTile = TileShape<128, 256, 4, 2>;

// The register budget (lesson 09). __launch_bounds__(384, 1) caps the kernel at 168 registers per
// thread (65536 / 384, rounded down to a multiple of 8), 64512 for the block. The producer works
// out the Stream-K items (lesson 14) and keeps 56; the consumers take 224 each:
// 128 x 56 + 256 x 224 = 64512.
constexpr int kProducerRegisters = 56;
constexpr int kConsumerRegisters = 224;

// The ring of slices, in dynamic shared memory (more than the 48 KB a block may declare statically).
// Every tile starts on a 1024-byte boundary (16 KB tiles, storage aligned by
// gemm::aligned_shared_storage), as the 128-byte swizzle of TMA and wgmma requires.
// a work item as the consumers need it (common/schedule/stream_k.hpp): where this
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
  // The work item whose first slice the stage holds (lesson 14).
  WorkItem work[Tile::kStages];
  // NEW in lesson 15: each consumer's subtile buffers, 64 x 64 bf16 in the 128-byte swizzle (TMA's
  // layout), 1024-byte aligned like the operand tiles.
  alignas(1024) bf16 epilogue[Tile::kConsumers][Tile::kEpilogueBuffers]
                             [Tile::kSubtileRows * Tile::kSubtileColumns];
};

// The four pipeline verbs of lesson 09 (named as in CUTLASS). A PipelineState is the
// {stage, phase} a role is at; each role advances its own once per slice.

// Producer: wait until the consumers have released the stage, then announce the bytes about to be
// loaded into it (this is the producer's one arrival on the full barrier). Its first pass through
// the ring must not wait: it starts on the opposite phase (PipelineState::producer_start()).
// at a work item's first slice (`post`), it writes the item into the stage
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

// The consumers' side of the hand-over (lesson 14): lane 0 of each warp reads the item from the
// stage and passes it to the other lanes with shuffles. Lane 0 is also the lane that tells the
// producer that the stage is free (consumer_release): no other lane reads the stage.
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

// The end of the work: a stage holding no slice, only the item "no parts". The
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

// The workspace where the parts of a split tile meet. For each block's tile of
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

// The fixup's synchronization, among the 256 consumer threads only (named
// barrier 1; barrier 0 is the whole block's and the producer does not take part).
constexpr uint32_t kConsumersBarrier = 1;

// Waits until `count` parts of the tile have added their partial sums: one thread reads the
// flag with acquire semantics until it holds `count`, then the consumers' barrier hands what it
// acquired (the other blocks' partial sums) to all of them.
template <class Tile>
__device__ inline void wait_for_parts(const uint32_t* flag, uint32_t count) {
  if (threadIdx.x == 128)
    while (gemm::ptx::load_acquire_gpu(flag) != count) {
    }
  gemm::ptx::named_barrier_sync(kConsumersBarrier, Workspace<Tile>::kConsumerThreads);
}

// Announces that `count` parts have now added theirs: the barrier makes sure that every
// consumer thread has written its share, then one thread stores the flag with release semantics,
// which publishes all of those writes at GPU scope.
template <class Tile>
__device__ inline void publish_parts(uint32_t* flag, uint32_t count) {
  gemm::ptx::named_barrier_sync(kConsumersBarrier, Workspace<Tile>::kConsumerThreads);
  if (threadIdx.x == 128) gemm::ptx::store_release_gpu(flag, count);
}

// NEW in lesson 15: what the epilogue computes, chosen at compile time. The plain product,
// D = A * B^T, or the fused D = act(alpha * A * B^T + beta * C + bias), whose beta * C and bias
// are read only when the launch has them (a run-time choice, the same for every thread).
template <bool Fused, gemm::Activation Act = gemm::Activation::none>
struct EpilogueKind {
  static constexpr bool kFused = Fused;
  static constexpr gemm::Activation kActivation = Act;
};
using PlainEpilogue = EpilogueKind<false>;
template <gemm::Activation Act>
using FusedEpilogue = EpilogueKind<true, Act>;

// The fused epilogue's operands (unused by the plain one).
struct EpilogueParams {
  float alpha, beta;
  const bf16* c;     // M x N, read when beta != 0
  const bf16* bias;  // N values, or nullptr
};

// Named barriers of the consumers (barrier 0 is the whole block's): the Stream-K fixup's (both
// consumers), and one per consumer for its epilogue.
constexpr uint32_t kEpilogueBarrier = 2;  // + consumer

// NEW in lesson 15: the bias of this thread's columns of the tile, one bf16 pair per block of 8
// columns (columns col0 + 8j + 2 (lane % 4) and the next: N % 8 == 0 and the column is even, so
// a pair is inside D or outside), 0 outside D or without a bias. Read for the whole tile before
// the first subtile, so that the loads' latency is paid once, not once per subtile.
template <class Tile, class Kind>
__device__ inline void load_bias(const EpilogueParams& params, int col0, int n,
                                 uint32_t (&bias)[Tile::kBlockN / 8]) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int block = 0; block < Tile::kBlockN / 8; ++block) {
    const int column = col0 + block * 8 + (lane % 4) * 2;
    bias[block] = 0;
    if (Kind::kFused && params.bias != nullptr && column < n)
      bias[block] = *reinterpret_cast<const uint32_t*>(params.bias + column);
  }
}

// NEW in lesson 15: a pair of adjacent outputs (row, column) and (row, column + 1), as bf16: the
// products themselves, or alpha * product + beta * C + bias through the activation (the fast
// GELU and SiLU of common/activation.hpp). C is read as a pair too; elements outside D read
// nothing, and the TMA store clips them anyway.
template <class Kind>
__device__ inline uint32_t epilogue_pair(float product0, float product1, uint32_t bias_bits,
                                         const EpilogueParams& params, int row, int column, int m,
                                         int n) {
  float2 value = make_float2(product0, product1);
  if constexpr (Kind::kFused) {
    const float2 bias = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&bias_bits));
    value.x = params.alpha * value.x + bias.x;
    value.y = params.alpha * value.y + bias.y;
    if (params.beta != 0.0f && row < m && column < n) {
      const float2 c = __bfloat1622float2(
          *reinterpret_cast<const __nv_bfloat162*>(params.c + int64_t(row) * n + column));
      value.x += params.beta * c.x;
      value.y += params.beta * c.y;
    }
    value.x = gemm::activate_fast<Kind::kActivation>(value.x);
    value.y = gemm::activate_fast<Kind::kActivation>(value.y);
  }
  const __nv_bfloat162 converted = __float22bfloat162_rn(value);
  return *reinterpret_cast<const uint32_t*>(&converted);
}

// NEW in lesson 15: the epilogue of one tile, for one consumer warpgroup: its 64 x 256 part of the
// block's tile, as 4 subtiles of 64 x 64. For each subtile:
//   1. the storing thread waits until the TMA store that last read the subtile's buffer is done
//      reading it (its own bulk groups: only the thread that committed them can wait for them),
//      then the consumer's barrier tells the other threads that the buffer is free;
//   2. every thread converts its accumulators to bf16 (after the fused epilogue) and stmatrix
//      writes them into the buffer, in the 128-byte swizzle;
//   3. every writing thread fences the async proxy (TMA reads shared memory through it, and must
//      see what the generic proxy wrote), then the consumer's barrier: all of it is written;
//   4. the storing thread starts the TMA store of the buffer and commits it as a bulk group.
// Nobody waits for the store itself: the next subtile goes to the other buffer, and after the last
// one the consumer returns to the main loop while the stores finish. `buffer` carries the buffer
// to use next from tile to tile.
template <class Tile, class Kind>
__device__ inline void store_tile(SharedStorage<Tile>& shared, const CUtensorMap& d_map,
                                  const float (&accumulator)[Tile::kBlockN / 2], int consumer,
                                  int row0, int col0, int m, int n, const EpilogueParams& params,
                                  int& buffer) {
  const int thread = threadIdx.x % 128, lane = thread % 32, warp = thread / 32;
  const bool storer = thread == 0;
  const uint32_t barrier = kEpilogueBarrier + consumer;
  const int first_row = row0 + consumer * Tile::kWarpgroupM;  // this consumer's rows of D
  uint32_t bias[Tile::kBlockN / 8];
  load_bias<Tile, Kind>(params, col0, n, bias);  // zeros for the plain epilogue: optimized away

  // Where this lane's stmatrix rows go in a subtile buffer. One stmatrix.x4 stores 4 matrices of
  // 8 x 8 (below); lane l gives the address of row l % 8 of matrix l / 8: matrices 0 and 2 are the
  // warp's upper 8 rows, 1 and 3 its lower 8, so the lane's row of the subtile is fixed, and only
  // its 16-byte chunk changes from one stmatrix to the next.
  // BEGIN EXERCISE(swizzled_address, declares=row_offset swizzle): the byte offset of this lane's
  //   row in a subtile buffer (128-byte rows), and the XOR that the 128-byte swizzle applies to the
  //   chunk numbers of that row
  const int row = warp * 16 + ((lane / 8) % 2) * 8 + lane % 8;
  const uint32_t row_offset = row * 128;
  const int swizzle = row % 8;
  // END EXERCISE

#pragma unroll
  for (int subtile = 0; subtile < Tile::kSubtiles; ++subtile) {
    bf16* tile = shared.epilogue[consumer][buffer];
    // BEGIN EXERCISE(buffer_reuse): make sure no TMA store still reads this buffer, and that
    //   every thread of the consumer knows it
    if (storer) gemm::ptx::bulk_wait_group_read<Tile::kEpilogueBuffers - 1>();
    gemm::ptx::named_barrier_sync(barrier, 128);
    // END EXERCISE

    // The warp's 16 rows by the subtile's 64 columns: 8 blocks of 8 columns, in the wgmma layout
    // (lesson 07): accumulators 4j, 4j + 1 are row lane / 4 of block j, 4j + 2, 4j + 3 row
    // lane / 4 + 8. One stmatrix.x4 stores 4 matrices of 8 x 8: block j's upper and lower 8 rows,
    // then block j + 1's.
#pragma unroll
    for (int pair = 0; pair < Tile::kSubtileColumns / 16; ++pair) {
      uint32_t packed[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int block = subtile * (Tile::kSubtileColumns / 8) + 2 * pair + q / 2;  // of the tile
        const int row = first_row + warp * 16 + (q % 2) * 8 + lane / 4;
        const int column = col0 + block * 8 + (lane % 4) * 2;
        const float* values = &accumulator[4 * block + 2 * (q % 2)];
        packed[q] = epilogue_pair<Kind>(values[0], values[1], bias[block], params, row, column, m, n);
      }
      const int chunk = 2 * pair + lane / 16;  // the lane's 16-byte chunk of its row
      const uint32_t row_address =
          gemm::ptx::shared_address(tile) + row_offset + ((chunk ^ swizzle) * 16);
      gemm::ptx::stmatrix_x4(row_address, packed[0], packed[1], packed[2], packed[3]);
    }

    // BEGIN EXERCISE(store_order): make what every thread wrote visible to the TMA store, and
    //   make sure that all of it is written before the store starts
    gemm::ptx::fence_proxy_async_shared_cta();
    gemm::ptx::named_barrier_sync(barrier, 128);
    // END EXERCISE
    if (storer) {
      gemm::ptx::tma_store_2d(&d_map, tile, col0 + subtile * Tile::kSubtileColumns, first_row);
      gemm::ptx::bulk_commit_group();
    }
    buffer = (buffer + 1) % Tile::kEpilogueBuffers;
  }
}

template <class Tile, class Kind>
__global__ void __launch_bounds__(Tile::kThreads, 1)
    gemm_kernel(int m, int n, const __grid_constant__ CUtensorMap a_map,
                const __grid_constant__ CUtensorMap b_map,
                const __grid_constant__ CUtensorMap d_map, int raster_group,
                const gemm::StreamKPlan plan, Workspace<Tile> workspace, EpilogueParams params) {
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);

  // Cluster c of the persistent grid is worker c of the Stream-K plan: its work
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
        // Only the slices of this item's k-range.
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
  int epilogue_buffer = 0;  // NEW in lesson 15: the subtile buffer to fill next

  // The consumers walk the same items as the producer, in the same order; their pipeline state
  // carries on from item to item (lesson 13).
  auto read_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  while (true) {
    // The item arrives with its first slice; an item of no parts ends the work.
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

    // The fixup of a tile cut into parts. Part u (in the order of the k-ranges)
    // waits until parts 0 .. u - 1 have added theirs. Every part but the last then leaves the sum
    // so far in the workspace (part 0 writes its own sums, the others add theirs) and counts
    // itself; the last part adds the sum to its accumulators and stores the tile below.
    if (work.units > 1) {
      uint32_t* flag = workspace.flags + work.slot;
      float4* partial =
          reinterpret_cast<float4*>(workspace.partials + work.slot * Workspace<Tile>::kTileFloats) +
          (threadIdx.x - 128);
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
    }

    // NEW in lesson 15: the epilogue through shared memory and TMA stores.
    store_tile<Tile, Kind>(shared, d_map, accumulator, consumer, work.row0, work.col0, m, n,
                           params, epilogue_buffer);
  }
  // NEW in lesson 15: the storing thread waits until its last TMA stores have read their buffers:
  // the block's shared memory must outlive them.
  if (threadIdx.x % 128 == 0) gemm::ptx::bulk_wait_group<0>();
  // The consumers' side of the final cluster barrier (lesson 12). Their last releases, which
  // arrive on the partner's barriers, happened before it.
  gemm::ptx::cluster_sync();
}

// The Stream-K plan of a problem on this GPU: its cluster tiles, k-iterations
// (slices) per tile, and as many workers as clusters can be resident at once, which every
// worker must be: a part waits for parts of other clusters, so all of them must be running.
template <class Tile, bool Reverse>
gemm::StreamKPlan plan_for(const gemm::GemmProblem& p) {
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile, PlainEpilogue>>(shared_bytes);
  // Every kind of epilogue has the same threads and shared memory: the same clusters fit.
  const int64_t clusters = gemm::resident_clusters<gemm_kernel<Tile, PlainEpilogue>>(
      Tile::kClusterM, Tile::kThreads, shared_bytes);
  const int64_t cluster_tiles = gemm::ceil_div<int64_t>(p.m, Tile::kBlockM * Tile::kClusterM) *
                                gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  return gemm::plan_stream_k(cluster_tiles, clusters, gemm::ceil_div<int64_t>(p.k, kBlockK), Reverse);
}

// Runs the kernel with one configuration and one kind of epilogue (the tuning driver under
// profiles/ times several): RasterGroup is the band width of the grouped order, Reverse the order
// of a cluster's Stream-K parts.
template <class Tile, class Kind, int RasterGroup = 8, bool Reverse = true>
void launch_kind(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  // The tensor maps of A and B (lesson 08), built on the host and passed by value. B's box is
  // half a tile, kBHalfRows rows: what one block multicasts (lesson 12).
  const CUtensorMap a_map =
      gemm::make_tensor_map(args.a, gemm::kmajor_tile_map_args(p.m, p.k, Tile::kBlockM, kBlockK));
  const CUtensorMap b_map = gemm::make_tensor_map(
      args.b, gemm::kmajor_tile_map_args(p.n, p.k, Tile::kBHalfRows, kBlockK));
  // NEW in lesson 15: D's tensor map, for the TMA stores: boxes of one subtile, 64 rows by 64
  // columns, in the 128-byte swizzle of the subtile buffers. D is M x N with N contiguous, the
  // same shape of map as A's (M x K).
  const CUtensorMap d_map = gemm::make_tensor_map(
      args.d, gemm::kmajor_tile_map_args(p.m, p.n, Tile::kSubtileRows, Tile::kSubtileColumns));
  // More than 48 KB of dynamic shared memory must be allowed explicitly, plus room to align the
  // storage to 1024 bytes.
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile, Kind>>(shared_bytes);
  // One cluster per worker of the Stream-K plan (lesson 14).
  const gemm::StreamKPlan plan = plan_for<Tile, Reverse>(p);
  Workspace<Tile> workspace;
  workspace.flags = static_cast<uint32_t*>(args.workspace);
  workspace.partials = reinterpret_cast<float*>(static_cast<unsigned char*>(args.workspace) +
                                                Workspace<Tile>::flag_bytes(plan));
  const EpilogueParams params{args.epilogue.alpha, args.epilogue.beta, args.epilogue.c,
                              args.epilogue.bias};
  gemm::launch_with_clusters(gemm_kernel<Tile, Kind>, unsigned(plan.workers * Tile::kClusterM),
                             Tile::kClusterM, Tile::kThreads, shared_bytes, stream, int(p.m),
                             int(p.n), a_map, b_map, d_map, RasterGroup, plan, workspace, params);
}

// NEW in lesson 15: the kernel for the launch's epilogue: the plain one for the plain product,
// otherwise the fused one with the activation compiled in.
template <class Tile, int RasterGroup = 8, bool Reverse = true>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  if (args.epilogue.is_plain())
    return launch_kind<Tile, PlainEpilogue, RasterGroup, Reverse>(args, stream);
  switch (args.epilogue.activation) {
    case gemm::Activation::none:
      return launch_kind<Tile, FusedEpilogue<gemm::Activation::none>, RasterGroup, Reverse>(args, stream);
    case gemm::Activation::relu:
      return launch_kind<Tile, FusedEpilogue<gemm::Activation::relu>, RasterGroup, Reverse>(args, stream);
    case gemm::Activation::gelu:
      return launch_kind<Tile, FusedEpilogue<gemm::Activation::gelu>, RasterGroup, Reverse>(args, stream);
    case gemm::Activation::silu:
      return launch_kind<Tile, FusedEpilogue<gemm::Activation::silu>, RasterGroup, Reverse>(args, stream);
  }
}

// The workspace this lesson needs for a problem (lesson 14).
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
    .id = 15,
    .parent = 14,
    .slug = "tma_store_epilogue",
    .title = "stmatrix + TMA-store epilogue, overlapped with the next tile; fused alpha/beta/bias/act",
    .launch = &launch,
    .workspace_bytes = &workspace_bytes,
    .min_arch = gemm::MinArch::sm90a,
    .zeroed_workspace = true,
    .fused_epilogue = true,
};

}  // namespace lesson15
