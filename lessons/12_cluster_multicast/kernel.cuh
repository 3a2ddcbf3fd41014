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
// and neither block may exit while the other can still reach into its shared memory.
// Graded instruction signature: HGMMA UTMALDG.2D.MULTICAST SYNCS.PHASECHK USETMAXREG
#pragma once

#include <cstdint>

#include "common/gemm.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/cluster.hpp"
#include "common/ptx/fence.hpp"
#include "common/ptx/mbarrier.hpp"
#include "common/ptx/setmaxnreg.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/shared_memory.hpp"
#include "common/tensor_map.hpp"
#include "common/wgmma_descriptor.hpp"

namespace lesson12 {

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
  // The bytes TMA delivers per stage, A's tile and B's (lesson 08). NEW in lesson 12: into each
  // block of the cluster, half of B from its own load and half from its partner's.
  static constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK * int(sizeof(bf16));
  // NEW in lesson 12: clusters of 2 blocks along M; each block loads and multicasts the rows
  // rank * kBHalfRows .. + kBHalfRows of the B tile.
  static constexpr int kClusterM = 2;
  static constexpr int kBHalfRows = kBlockN / kClusterM;
  // A consumer releases slice kt - 1 only after starting on slice kt: with one stage, slice kt
  // could never be loaded.
  static_assert(kStages >= 2, "the ring needs at least two stages");
};
// The configuration of lesson 10: 2 consumer warpgroups of 64 x 256 on a 128 x 256 tile, 4 stages.
using DefaultTile = TileShape<128, 256, 4>;

// The register budget (lesson 09). __launch_bounds__(384, 1) caps the kernel at 168 registers per
// thread (65536 / 384, rounded down to a multiple of 8), 64512 for the block. The producer gives
// most of its share back and the consumers take it: 128 x 40 + 256 x 232 = 64512. A consumer
// thread now holds 128 accumulators, plus descriptors, addresses and loop state.
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters = 232;

// The ring of slices, in dynamic shared memory (more than the 48 KB a block may declare statically).
// Every tile starts on a 1024-byte boundary (16 KB tiles, storage aligned by
// gemm::aligned_shared_storage), as the 128-byte swizzle of TMA and wgmma requires.
template <class Tile>
struct SharedStorage {
  alignas(1024) bf16 a[Tile::kStages][Tile::kBlockM * kBlockK];
  alignas(1024) bf16 b[Tile::kStages][Tile::kBlockN * kBlockK];
  // One "full" barrier per stage. Its phase completes when the producer has arrived (once,
  // announcing kStageBytes) and all those bytes have landed (lesson 08).
  uint64_t full[Tile::kStages];
  // One "empty" barrier per stage (lesson 09). NEW in lesson 12: its phase completes when every
  // consumer warp of BOTH blocks has arrived: this block's producer multicasts into the partner's
  // stage too, so it may refill the stage only when both have finished reading it.
  uint64_t empty[Tile::kStages];
};

// The four pipeline verbs of lesson 09 (named as in CUTLASS). A PipelineState is the
// {stage, phase} a role is at; each role advances its own once per slice.

// Producer: wait until the consumers have released the stage, then announce the bytes about to be
// loaded into it (this is the producer's one arrival on the full barrier). Its first pass through
// the ring must not wait: it starts on the opposite phase (PipelineState::producer_start()).
template <class Tile>
__device__ inline void producer_acquire(SharedStorage<Tile>& shared,
                                        const gemm::PipelineState<Tile::kStages>& state) {
  gemm::ptx::mbarrier_wait(&shared.empty[state.index], state.phase);
  gemm::ptx::mbarrier_arrive_expect_tx(&shared.full[state.index], Tile::kStageBytes);
}
// (producer_commit: nothing to do with TMA, whose bytes complete the full barrier by themselves.)

// Consumer: wait until the stage's bytes have landed.
template <class Tile>
__device__ inline void consumer_wait(SharedStorage<Tile>& shared,
                                     const gemm::PipelineState<Tile::kStages>& state) {
  gemm::ptx::mbarrier_wait(&shared.full[state.index], state.phase);
}

// Consumer: this warp no longer reads the stage; lane 0 arrives for the warp. Call it only after
// the wgmmas that read the stage are known to be complete (wgmma_wait_group).
// NEW in lesson 12: it arrives on the stage's empty barrier in EVERY block of the cluster (its
// own included), through the cluster address of each (mapa): both producers write into this
// block's stage, so both must hear that it is free. The arrival needs no cluster-wide fence before
// it (common/ptx/cluster.hpp): the wgmma reads it vouches for are already complete.
template <class Tile>
__device__ inline void consumer_release(SharedStorage<Tile>& shared,
                                        const gemm::PipelineState<Tile::kStages>& state) {
  if (threadIdx.x % 32 != 0) return;
  const uint32_t empty = gemm::ptx::shared_address(&shared.empty[state.index]);
#pragma unroll
  for (uint32_t rank = 0; rank < Tile::kClusterM; ++rank)
    gemm::ptx::mbarrier_arrive_cluster(gemm::ptx::map_to_cluster_cta(empty, rank));
}

// NEW in lesson 12: the producer's last act, as CUTLASS calls it. It waits, stage by stage, for
// the consumers' final releases (its own and the partner's): once they have all arrived, no
// consumer of the cluster will touch this block's barriers again. Without it, this block could
// leave while the partner still arrives on its barriers: a rare hang or corrupted shared memory.
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

template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, 1)
    gemm_kernel(int m, int n, int k, const __grid_constant__ CUtensorMap a_map,
                const __grid_constant__ CUtensorMap b_map, bf16* d) {
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);

  // NEW in lesson 12: cluster c computes the column of tiles c % tiles_n and the pair of tile rows
  // 2 (c / tiles_n) and 2 (c / tiles_n) + 1; the block of rank r takes the row 2 (c / tiles_n) + r.
  // Both blocks need the same B tile. At a ragged M the second block's rows may lie entirely
  // below D: it still loads, multicasts and computes (on zeros), and only its stores are skipped.
  const int tiles_n = gemm::ceil_div(n, Tile::kBlockN);
  const uint32_t rank = gemm::ptx::cluster_cta_rank();
  const int cluster = int(gemm::ptx::cluster_id_x());
  const int row0 = ((cluster / tiles_n) * Tile::kClusterM + int(rank)) * Tile::kBlockM;
  const int col0 = (cluster % tiles_n) * Tile::kBlockN;
  const int k_slices = gemm::ceil_div(k, kBlockK);
  const int warpgroup = threadIdx.x / 128;

  // Thread 0 sets up the barriers (lessons 08 and 09). NEW in lesson 12: the empty barriers
  // expect one arrival per consumer warp of both blocks. The fence makes the initialization
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
      auto write_state = gemm::PipelineState<Tile::kStages>::producer_start();
      for (int slice = 0; slice < k_slices; ++slice) {
        producer_acquire(shared, write_state);
        uint64_t* full = &shared.full[write_state.index];
        gemm::ptx::tma_load_2d(shared.a[write_state.index], &a_map, full, slice * kBlockK, row0);
        // BEGIN EXERCISE(multicast_b): load this block's half of the B slice into the same place
        //   in both blocks of the cluster
        // NEW in lesson 12: rows rank * 128 .. rank * 128 + 127 of the B tile, written into both
        // blocks (mask 0b11) at the same offset, counted on each block's full barrier.
        bf16* b_half = shared.b[write_state.index] + rank * Tile::kBHalfRows * kBlockK;
        const uint16_t both_blocks = (1u << Tile::kClusterM) - 1;
        gemm::ptx::tma_load_2d_multicast(b_half, &b_map, full, slice * kBlockK,
                                         col0 + int(rank) * Tile::kBHalfRows, both_blocks);
        // END EXERCISE
        write_state.advance();
      }
      // BEGIN EXERCISE(producer_tail): before this block may leave, wait until every consumer
      //   of the cluster has released every stage
      producer_tail(shared, write_state);
      // END EXERCISE
    }
    // NEW in lesson 12: every thread of both blocks meets at a cluster barrier before leaving
    // (the consumers at the end of the kernel): after it, no block reaches into the other.
    gemm::ptx::cluster_sync();
    return;
  }

  // ---- Consumer warpgroups: registers up to 232. ----
  gemm::ptx::setmaxnreg_inc<kConsumerRegisters>();
  // Consumer c (warpgroup c + 1) computes rows 64c .. 64c + 63 of the 128 x 256 tile, all 256
  // columns: 128 fp32 accumulators per thread (lesson 10).
  const int consumer = warpgroup - 1;
  float accumulator[Tile::kBlockN / 2];

  auto read_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  auto release_state = read_state;  // the oldest stage this warpgroup still reads
  for (int kt = 0; kt < k_slices; ++kt) {
    consumer_wait(shared, read_state);

    // The slice's 4 k-steps as one batch of asynchronous wgmmas (lesson 07).
    const bf16* a_tile = shared.a[read_state.index] + consumer * Tile::kWarpgroupM * kBlockK;
    const bf16* b_tile = shared.b[read_state.index];
    // The first k-step of the first slice runs with scale-d = 0 (lesson 10).
    const bool overwrite = kt == 0;
    gemm::ptx::warpgroup_fence_operand(accumulator);
    gemm::ptx::wgmma_fence();
#pragma unroll
    for (int step = 0; step < Tile::kKSteps; ++step)
      gemm::ptx::wgmma_m64k16_bf16<Tile::kBlockN>(accumulator, tile_descriptor(a_tile, step),
                                                  tile_descriptor(b_tile, step),
                                                  /*accumulate=*/!overwrite || step > 0);
    gemm::ptx::wgmma_commit_group();
    // Wait until at most ONE group is pending (lesson 09): this slice's wgmmas keep running
    // while the previous slice's are retired, so the tensor cores never drain between slices.
    // Only now is the previous slice's stage known to be no longer read: release it.
    gemm::ptx::wgmma_wait_group<1>();
    gemm::ptx::warpgroup_fence_operand(accumulator);
    if (kt > 0) {
      consumer_release(shared, release_state);
      release_state.advance();
    }
    read_state.advance();
  }
  // Drain: wait for the last group, then release its stage (the producer may be waiting on it
  // only if the ring is shorter than the remaining work, but releasing keeps the protocol whole).
  gemm::ptx::wgmma_wait_group<0>();
  gemm::ptx::warpgroup_fence_operand(accumulator);
  if (k_slices > 0) consumer_release(shared, release_state);

  // The epilogue follows wgmma's accumulator layout (lesson 07). Warp w of the warpgroup
  // holds rows 16w + lane / 4 and 16w + lane / 4 + 8 of its 64 rows; accumulators 4j .. 4j + 3
  // are columns 8j + 2 * (lane % 4) and the next one, in those two rows. N % 8 == 0 and the
  // column is even, so a pair is entirely inside D or outside.
  const int lane = threadIdx.x % 32;
  const int warp_in_group = (threadIdx.x % 128) / 32;
  const int row = row0 + consumer * Tile::kWarpgroupM + warp_in_group * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < Tile::kBlockN / 8; ++j) {
    const int column = col0 + j * 8 + (lane % 4) * 2;
    if (column >= n) continue;
    const float* values = &accumulator[4 * j];
    if (row < m)
      *reinterpret_cast<__nv_bfloat162*>(d + int64_t(row) * n + column) =
          __floats2bfloat162_rn(values[0], values[1]);
    if (row + 8 < m)
      *reinterpret_cast<__nv_bfloat162*>(d + int64_t(row + 8) * n + column) =
          __floats2bfloat162_rn(values[2], values[3]);
  }
  // NEW in lesson 12: the consumers' side of the final cluster barrier. Their last releases,
  // which arrive on the partner's barriers, happened before it.
  gemm::ptx::cluster_sync();
}

// Runs the kernel with any tile configuration (the sweep drivers under profiles/ time others).
template <class Tile>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  // NEW in lesson 12: one cluster per pair of tile rows (rounded up) and tile column.
  const int64_t clusters = gemm::ceil_div<int64_t>(p.m, Tile::kBlockM * Tile::kClusterM) *
                           gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  // The tensor maps of A and B (lesson 08), built on the host and passed by value. NEW in lesson
  // 12: B's box is half a tile, kBHalfRows rows: what one block multicasts.
  const CUtensorMap a_map =
      gemm::make_tensor_map(args.a, gemm::kmajor_tile_map_args(p.m, p.k, Tile::kBlockM, kBlockK));
  const CUtensorMap b_map = gemm::make_tensor_map(
      args.b, gemm::kmajor_tile_map_args(p.n, p.k, Tile::kBHalfRows, kBlockK));
  // More than 48 KB of dynamic shared memory must be allowed explicitly, plus room to align the
  // storage to 1024 bytes.
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile>>(shared_bytes);
  // NEW in lesson 12: a cluster launch, after checking that a cluster fits on this GPU at all
  // (a clear error, not a failed launch, if it does not).
  gemm::resident_clusters<gemm_kernel<Tile>>(Tile::kClusterM, Tile::kThreads, shared_bytes);
  gemm::launch_with_clusters(gemm_kernel<Tile>, unsigned(clusters * Tile::kClusterM),
                             Tile::kClusterM, Tile::kThreads, shared_bytes, stream, int(p.m),
                             int(p.n), int(p.k), a_map, b_map, args.d);
}

inline void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch_tile<DefaultTile>(args, stream);
}

inline constexpr gemm::Lesson kLesson{
    .id = 12,
    .parent = 10,
    .slug = "cluster_multicast",
    .title = "2-block clusters: each block multicasts half of the shared B tile to both",
    .launch = &launch,
    .workspace_bytes = nullptr,
    .min_arch = gemm::MinArch::sm90a,
};

}  // namespace lesson12
