// Lesson 08: TMA loads into a ring of stages guarded by transaction mbarriers.
//
// In lesson 07 every thread computed addresses and issued cp.async copies for its share of each
// slice: 2048 copies of 16 bytes per slice for the block, 8 per thread (64 warp-wide cp.async
// instructions for its 8 warps), and registers for the addresses. Hopper's
// Tensor Memory Accelerator (TMA) copies a whole tile with ONE instruction issued by one thread:
// it reads a tensor map (a descriptor of the matrix built on the host), fetches the box, writes it
// into shared memory already in the 128-byte swizzle, fills what lies outside the matrix with
// zeros, and counts the bytes it delivered on an mbarrier. The consumers wait on that barrier
// ("stage full") instead of on cp.async groups and a block barrier.
//
// Graded instruction signature: HGMMA UTMALDG SYNCS.PHASECHK
#pragma once

#include <cstdint>

#include "common/gemm.hpp"
#include "common/hopper/kstep_descriptor.hpp"
#include "common/hopper/store_rows.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/fence.hpp"
#include "common/ptx/mbarrier.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/shared_memory.hpp"
#include "common/tensor_map.hpp"
#include "common/wgmma_descriptor.hpp"

namespace lesson08 {

using gemm::bf16;
using gemm::taught::kstep_descriptor;  // lesson 07's
using gemm::taught::store_rows;        // lesson 07's epilogue

constexpr int kBlockK = 64;  // K per shared-memory slice: rows of 128 bytes

// The tile is split among warpgroups, each computing 64 full-width rows of it with
// wgmma.m64nNk16, N = BlockN (lesson 07).
template <int BlockM_, int BlockN_, int Stages_>
struct TileShape {
  static constexpr int kBlockM = BlockM_, kBlockN = BlockN_;  // the block's tile of D
  static constexpr int kWarpgroupM = 64;                      // rows of one wgmma (m64)
  static constexpr int kWarpgroups = kBlockM / kWarpgroupM;
  static constexpr int kThreads = kWarpgroups * 128;
  static constexpr int kMmaK = 16;                            // K of one wgmma
  static constexpr int kKSteps = kBlockK / kMmaK;             // 16-wide k-steps per slice
  static constexpr int kStages = Stages_;                     // slices in the shared-memory ring
  // NEW in lesson 08: the bytes TMA delivers per stage, A's tile and B's.
  static constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK * int(sizeof(bf16));
};
// The configuration this lesson runs: 2 warpgroups of 64 x 128 on a 128 x 128 tile.
// NEW in lesson 08: 2 stages (64 KB) instead of lesson 07's 3, the fastest ring on our H100: small
// blocks let two of them share an SM and hide each other's waits. The README measures 2, 3 and 4
// stages, so this change has its own row.
using DefaultTile = TileShape<128, 128, 2>;

// The ring of slices, in dynamic shared memory (more than the 48 KB a block may declare statically).
// Every tile starts on a 1024-byte boundary (16 KB tiles, storage aligned by
// gemm::aligned_shared_storage), as the 128-byte swizzle of TMA and wgmma requires.
template <class Tile>
struct SharedStorage {
  alignas(1024) bf16 a[Tile::kStages][Tile::kBlockM * kBlockK];
  alignas(1024) bf16 b[Tile::kStages][Tile::kBlockN * kBlockK];
  // NEW in lesson 08: one "full" barrier per stage. Its phase completes when the producer has
  // arrived (once, announcing kStageBytes) and all those bytes have landed.
  uint64_t full[Tile::kStages];
};

// NEW in lesson 08: A and B arrive as tensor maps, by value. __grid_constant__ makes &a_map the
// address of the parameter itself, not of a local copy: the address TMA needs.
template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads)
    gemm_kernel(int m, int n, int k, const __grid_constant__ CUtensorMap a_map,
                const __grid_constant__ CUtensorMap b_map, bf16* d) {
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);

  const int tiles_n = gemm::ceil_div(n, Tile::kBlockN);
  const int row0 = (blockIdx.x / tiles_n) * Tile::kBlockM;
  const int col0 = (blockIdx.x % tiles_n) * Tile::kBlockN;

  // Warpgroup g (threads 128g .. 128g + 127) computes rows 64g .. 64g + 63 of the tile, all
  // columns: BlockN / 2 fp32 accumulators per thread, laid out as in common/ptx/wgmma.hpp.
  const int warpgroup = threadIdx.x / 128;
  float accumulator[Tile::kBlockN / 2];

  // NEW in lesson 08: thread 0 prefetches the tensor maps and sets up the barriers: one expected
  // arrival per phase (its own arrive_expect_tx), plus the transaction bytes. The fence makes the
  // initialization visible to the async proxy (TMA completes transactions on these barriers), and
  // the block barrier makes it visible to every thread before anyone waits.
  const bool is_loader = threadIdx.x == 0;
  if (is_loader) {
    gemm::ptx::prefetch_tensor_map(&a_map);
    gemm::ptx::prefetch_tensor_map(&b_map);
    for (int stage = 0; stage < Tile::kStages; ++stage) gemm::ptx::mbarrier_init(&shared.full[stage], 1);
    gemm::ptx::fence_mbarrier_init();
  }
  __syncthreads();

  // NEW in lesson 08: loading a slice is two TMA instructions from one thread. It first tells the
  // stage's full barrier how many bytes to expect (and arrives), then starts the copies, which
  // count their bytes on that barrier as they land. Boxes that hang over the edge of A or B are
  // filled with zeros and still count their full size.
  const int k_slices = gemm::ceil_div(k, kBlockK);
  const auto start_loading = [&](int slice) {
    if (slice >= k_slices) return;
    const int stage = slice % Tile::kStages;
    gemm::ptx::mbarrier_arrive_expect_tx(&shared.full[stage], Tile::kStageBytes);
    gemm::ptx::tma_load_2d(shared.a[stage], &a_map, &shared.full[stage], slice * kBlockK, row0);
    gemm::ptx::tma_load_2d(shared.b[stage], &b_map, &shared.full[stage], slice * kBlockK, col0);
  };

  // NEW in lesson 08: the prologue fills every stage (lesson 07: Stages - 1), because a stage is
  // now refilled only after it has been read. Nobody reads any of them yet.
  if (is_loader)
    for (int slice = 0; slice < Tile::kStages; ++slice) start_loading(slice);

  // NEW in lesson 08: {stage, phase} of the full barrier to wait on. Slice kt uses stage
  // kt % Stages for the (kt / Stages)-th time, i.e. waits for phase kt / Stages of its barrier;
  // mbarrier_wait only needs that phase's parity, which flips each time the stage index wraps.
  gemm::PipelineState<Tile::kStages> full_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  for (int kt = 0; kt < k_slices; ++kt) {
    // BEGIN EXERCISE(full_barrier): wait until the slice's bytes have landed in its stage
    // Wait for the stage's full barrier: TMA delivered all of slice kt. TMA writes through the
    // async proxy, the same path wgmma reads through, so no proxy fence is needed here.
    gemm::ptx::mbarrier_wait(&shared.full[full_state.index], full_state.phase);
    // END EXERCISE

    // The slice's 4 k-steps as one batch of asynchronous wgmmas (lesson 07).
    const bf16* a_tile = shared.a[full_state.index] + warpgroup * Tile::kWarpgroupM * kBlockK;
    const bf16* b_tile = shared.b[full_state.index];
    // Fence the accumulators: the compiler must not move their reads or writes across the wgmmas,
    // which read and write them asynchronously.
    gemm::ptx::warpgroup_fence_operand(accumulator);
    // wgmma.fence: this warpgroup's earlier accesses to the accumulator registers
    // are complete before the wgmmas read them.
    gemm::ptx::wgmma_fence();
#pragma unroll
    for (int step = 0; step < Tile::kKSteps; ++step)
      gemm::ptx::wgmma_m64k16_bf16<Tile::kBlockN>(accumulator, kstep_descriptor(a_tile, step),
                                                  kstep_descriptor(b_tile, step),
                                                  /*accumulate=*/kt > 0 || step > 0);
    // Close the batch into one group and wait for it: the stage may be refilled and the
    // accumulators read only once these wgmmas are complete.
    gemm::ptx::wgmma_commit_group();
    gemm::ptx::wgmma_wait_group<0>();
    gemm::ptx::warpgroup_fence_operand(accumulator);

    // NEW in lesson 08: the block barrier moves after the MMAs. The full barrier now says when a
    // slice has landed, so this one only frees the stage for its refill.
    // Barrier: both warpgroups have finished reading this stage (each waited for its own
    // wgmmas), so the loader may overwrite it with slice kt + Stages.
    __syncthreads();
    if (is_loader) start_loading(kt + Tile::kStages);
    full_state.advance();
  }

  // The epilogue of lesson 07.
  store_rows(d, accumulator, row0 + warpgroup * Tile::kWarpgroupM, col0, m, n);
}

// Runs the kernel with any tile configuration (the sweep drivers under profiles/ time others).
template <class Tile>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  const int64_t tiles =
      gemm::ceil_div<int64_t>(p.m, Tile::kBlockM) * gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  // NEW in lesson 08: the tensor maps of A and B, built on the host and passed by value. Boxes of
  // BlockM (BlockN) rows by 64 K values, 128-byte swizzle, zeros outside the matrix.
  const CUtensorMap a_map =
      gemm::make_tensor_map(args.a, gemm::kmajor_tile_map_args(p.m, p.k, Tile::kBlockM, kBlockK));
  const CUtensorMap b_map =
      gemm::make_tensor_map(args.b, gemm::kmajor_tile_map_args(p.n, p.k, Tile::kBlockN, kBlockK));
  // More than 48 KB of dynamic shared memory must be allowed explicitly, plus room to align the
  // storage to 1024 bytes.
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile>>(shared_bytes);
  gemm_kernel<Tile><<<unsigned(tiles), Tile::kThreads, shared_bytes, stream>>>(
      int(p.m), int(p.n), int(p.k), a_map, b_map, args.d);
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

}  // namespace lesson08
