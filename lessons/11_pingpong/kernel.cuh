// Lesson 11: ping-pong consumers on a persistent grid.
//
// In lesson 10 both consumer warpgroups work on the same tile, so they also reach its epilogue
// together: while they convert and store 128 accumulators each, no wgmma runs, and the tensor
// cores wait. Then the block ends and a new one starts from an empty pipeline. Here:
//   - the grid is persistent: one block per SM, looping over tiles (tile i * grid + block);
//   - each consumer warpgroup owns WHOLE tiles, and the two take turns: consumer 0 computes the
//     block's even tiles, consumer 1 its odd ones;
//   - a 2 x 2 ordered barrier makes them alternate: consumer 0 runs its MMAs while consumer 1
//     stores its previous tile, then consumer 1 runs its MMAs while consumer 0 stores. One
//     consumer's epilogue hides behind the other's wgmmas, and the tensor cores stay busy;
//   - the producer never stops: it loads the next tile's slices while a consumer still computes.
// The price: each tile is one warpgroup's, at most 128 accumulators per thread, so a tile is
// half the size of lesson 10's and its loads feed half as many FLOPs.
// Graded instruction signature: HGMMA UTMALDG SYNCS.PHASECHK USETMAXREG
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/gemm.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/fence.hpp"
#include "common/ptx/mbarrier.hpp"
#include "common/ptx/setmaxnreg.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/persistent.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/shared_memory.hpp"
#include "common/tensor_map.hpp"
#include "common/wgmma_descriptor.hpp"

namespace lesson11 {

using gemm::bf16;

constexpr int kBlockK = 64;  // K per shared-memory slice: rows of 128 bytes

// NEW in lesson 11: a tile is ONE consumer warpgroup's work. It covers kRowBlocks blocks of 64
// rows, each computed by one wgmma.m64nNk16 (N = BlockN) per k-step.
template <int BlockM_, int BlockN_, int Stages_>
struct TileShape {
  static constexpr int kBlockM = BlockM_, kBlockN = BlockN_;  // one consumer's tile of D
  static constexpr int kWarpgroupM = 64;                      // rows of one wgmma (m64)
  static constexpr int kRowBlocks = kBlockM / kWarpgroupM;    // wgmmas per k-step
  // Warpgroup 0 produces, warpgroups 1 and 2 consume, taking turns.
  static constexpr int kConsumers = 2;
  static constexpr int kThreads = (1 + kConsumers) * 128;
  static constexpr int kMmaK = 16;                            // K of one wgmma
  static constexpr int kKSteps = kBlockK / kMmaK;             // 16-wide k-steps per slice
  static constexpr int kStages = Stages_;                     // slices in the shared-memory ring
  // The bytes TMA delivers per stage, A's tile and B's (lesson 08).
  static constexpr int kStageBytes = (kBlockM + kBlockN) * kBlockK * int(sizeof(bf16));
  // More than 128 fp32 accumulators per thread do not fit next to everything else in 232
  // registers: ptxas would spill them (and warn C7511).
  static constexpr int kAccumulators = kRowBlocks * kBlockN / 2;
  static_assert(kAccumulators <= 128, "one consumer holds at most 128 accumulators per thread");
  static_assert(kStages >= 2, "the ring needs at least two stages");
};
// NEW in lesson 11: the configuration this lesson runs: tiles of 128 x 128 (two m64n128k16 per
// k-step, 128 accumulators per thread), 6 stages of 32 KB (192 KB). The README also measures
// 64 x 256 tiles (one m64n256k16, 5 stages of 40 KB).
using DefaultTile = TileShape<128, 128, 6>;

// The register budget (lesson 09): 128 x 40 + 256 x 232 = 64512 registers for the block.
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters = 232;

// The ring of slices, in dynamic shared memory. Every tile starts on a 1024-byte boundary, as the
// 128-byte swizzle of TMA and wgmma requires (lesson 07).
template <class Tile>
struct SharedStorage {
  alignas(1024) bf16 a[Tile::kStages][Tile::kBlockM * kBlockK];
  alignas(1024) bf16 b[Tile::kStages][Tile::kBlockN * kBlockK];
  // One "full" barrier per stage: the producer's arrival plus kStageBytes (lesson 08).
  uint64_t full[Tile::kStages];
  // One "empty" barrier per stage (lesson 09). NEW in lesson 11: a stage holds a slice of one
  // consumer's tile, so only that consumer's 4 warps arrive on it.
  uint64_t empty[Tile::kStages];
  // NEW in lesson 11: the 2 x 2 ordered barrier. mma_turn[c] completes a phase when the other
  // consumer has finished issuing and retiring its MMAs: then consumer c may start its own.
  // epilogue_turn[c] likewise for the epilogues. One arrival per phase.
  uint64_t mma_turn[2];
  uint64_t epilogue_turn[2];
};

// The four pipeline verbs of lesson 09 (named as in CUTLASS).
template <class Tile>
__device__ inline void producer_acquire(SharedStorage<Tile>& shared,
                                        const gemm::PipelineState<Tile::kStages>& state) {
  gemm::ptx::mbarrier_wait(&shared.empty[state.index], state.phase);
  gemm::ptx::mbarrier_arrive_expect_tx(&shared.full[state.index], Tile::kStageBytes);
}
// (producer_commit: nothing to do with TMA, whose bytes complete the full barrier by themselves.)

template <class Tile>
__device__ inline void consumer_wait(SharedStorage<Tile>& shared,
                                     const gemm::PipelineState<Tile::kStages>& state) {
  gemm::ptx::mbarrier_wait(&shared.full[state.index], state.phase);
}

template <class Tile>
__device__ inline void consumer_release(SharedStorage<Tile>& shared,
                                        const gemm::PipelineState<Tile::kStages>& state) {
  if (threadIdx.x % 32 == 0) gemm::ptx::mbarrier_arrive(&shared.empty[state.index]);
}

// NEW in lesson 11: the ordered barrier's two verbs. A consumer waits for its turn on its own
// barrier and, when done, passes the turn by arriving (one thread for the warpgroup) on the
// other consumer's. `turn` is a one-stage pipeline state: its phase flips after every wait.
__device__ inline void wait_for_turn(uint64_t* own_turn, gemm::PipelineState<1>& turn) {
  gemm::ptx::mbarrier_wait(own_turn, turn.phase);
  turn.advance();
}
__device__ inline void pass_turn(uint64_t* other_turn) {
  if (threadIdx.x % 128 == 0) gemm::ptx::mbarrier_arrive(other_turn);
}

// The wgmma descriptor of k-step `step` of a K-major, 128-byte swizzled tile (lesson 07).
__device__ inline uint64_t tile_descriptor(const bf16* tile, int step) {
  return gemm::make_kmajor_sw128_descriptor(gemm::ptx::shared_address(tile) + step * 32);
}

template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, 1)
    gemm_kernel(int m, int n, int k, const __grid_constant__ CUtensorMap a_map,
                const __grid_constant__ CUtensorMap b_map, bf16* d) {
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);

  // NEW in lesson 11: this block's tiles are blockIdx.x, blockIdx.x + gridDim.x, ...
  // (common/schedule/persistent.hpp), in row-major order over the tiles of D.
  const int64_t tiles_n = gemm::ceil_div(n, Tile::kBlockN);
  const int64_t tiles = gemm::ceil_div(m, Tile::kBlockM) * tiles_n;
  const int64_t block_tiles = gemm::persistent_tile_count(blockIdx.x, gridDim.x, tiles);
  const int k_slices = gemm::ceil_div(k, kBlockK);
  const int warpgroup = threadIdx.x / 128;

  // Thread 0 sets up the barriers: full (one producer arrival), empty (NEW in lesson 11: the
  // 4 warps of the one consumer that reads the stage), and the turns (one arrival each). The
  // fence makes the initialization visible to the async proxy (TMA), the block barrier to every
  // thread, before anyone waits or arrives.
  if (threadIdx.x == 0) {
    gemm::ptx::prefetch_tensor_map(&a_map);
    gemm::ptx::prefetch_tensor_map(&b_map);
    for (int stage = 0; stage < Tile::kStages; ++stage) {
      gemm::ptx::mbarrier_init(&shared.full[stage], 1);
      gemm::ptx::mbarrier_init(&shared.empty[stage], 4);
    }
    for (int consumer = 0; consumer < 2; ++consumer) {
      gemm::ptx::mbarrier_init(&shared.mma_turn[consumer], 1);
      gemm::ptx::mbarrier_init(&shared.epilogue_turn[consumer], 1);
    }
    gemm::ptx::fence_mbarrier_init();
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---- Producer warpgroup: one elected thread loads every slice of every tile of the block,
    // in order, running ahead into the next tile as far as the ring allows. ----
    gemm::ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) {
      auto write_state = gemm::PipelineState<Tile::kStages>::producer_start();
      for (int64_t i = 0; i < block_tiles; ++i) {
        const gemm::TileCoordinates tile =
            gemm::row_major_tile(gemm::persistent_tile(blockIdx.x, gridDim.x, i), tiles_n);
        const int row0 = int(tile.m) * Tile::kBlockM;
        const int col0 = int(tile.n) * Tile::kBlockN;
        for (int slice = 0; slice < k_slices; ++slice) {
          producer_acquire(shared, write_state);
          uint64_t* full = &shared.full[write_state.index];
          gemm::ptx::tma_load_2d(shared.a[write_state.index], &a_map, full, slice * kBlockK, row0);
          gemm::ptx::tma_load_2d(shared.b[write_state.index], &b_map, full, slice * kBlockK, col0);
          write_state.advance();
        }
      }
    }
    // TMA copies in flight complete anyway; the consumers wait for them.
    return;
  }

  // ---- Consumer warpgroups: registers up to 232. ----
  gemm::ptx::setmaxnreg_inc<kConsumerRegisters>();
  const int consumer = warpgroup - 1;
  float accumulator[Tile::kRowBlocks][Tile::kBlockN / 2];

  // NEW in lesson 11: the producer fills the ring with the slices of the block's tiles in order:
  // tile 0's k_slices slices, then tile 1's, ... Consumer 1's first slice is therefore the
  // (k_slices)-th of the ring: it starts that far on. Phases carry on from tile to tile.
  auto read_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  read_state.advance(consumer * k_slices);
  // Consumer 0 takes the first turn of each kind: its first waits must return at once, so it
  // starts on phase 1 (a fresh barrier's "preceding phase", like a producer's first acquire).
  gemm::PipelineState<1> mma_turn{0, consumer == 0 ? 1u : 0u};
  gemm::PipelineState<1> epilogue_turn = mma_turn;

  for (int64_t i = consumer; i < block_tiles; i += 2) {
    const gemm::TileCoordinates tile =
        gemm::row_major_tile(gemm::persistent_tile(blockIdx.x, gridDim.x, i), tiles_n);
    const int row0 = int(tile.m) * Tile::kBlockM;
    const int col0 = int(tile.n) * Tile::kBlockN;

    // BEGIN EXERCISE(mma_turn): wait until the other consumer has finished its MMAs
    // MMA phase: wait until the other consumer has retired its last wgmma, so that this
    // consumer's wgmmas have the tensor cores to themselves.
    wait_for_turn(&shared.mma_turn[consumer], mma_turn);
    // END EXERCISE
    auto release_state = read_state;  // the oldest stage this warpgroup still reads
    for (int kt = 0; kt < k_slices; ++kt) {
      consumer_wait(shared, read_state);
      const bf16* a_tile = shared.a[read_state.index];
      const bf16* b_tile = shared.b[read_state.index];
      // The slice's 4 k-steps as one batch of asynchronous wgmmas, one per 64-row block of the
      // tile (two for 128 x 128), each with its own accumulators (lesson 07).
#pragma unroll
      for (int r = 0; r < Tile::kRowBlocks; ++r) gemm::ptx::warpgroup_fence_operand(accumulator[r]);
      gemm::ptx::wgmma_fence();
#pragma unroll
      for (int step = 0; step < Tile::kKSteps; ++step) {
        // Scale-d = 0 on the tile's first k-step: the accumulators still hold the previous tile.
        const bool accumulate = kt > 0 || step > 0;
#pragma unroll
        for (int r = 0; r < Tile::kRowBlocks; ++r)
          gemm::ptx::wgmma_m64k16_bf16<Tile::kBlockN>(
              accumulator[r], tile_descriptor(a_tile + r * Tile::kWarpgroupM * kBlockK, step),
              tile_descriptor(b_tile, step), accumulate);
      }
      gemm::ptx::wgmma_commit_group();
      // Keep this slice's wgmmas running while the previous slice's retire, then release the
      // previous slice's stage (lesson 09).
      gemm::ptx::wgmma_wait_group<1>();
#pragma unroll
      for (int r = 0; r < Tile::kRowBlocks; ++r) gemm::ptx::warpgroup_fence_operand(accumulator[r]);
      if (kt > 0) {
        consumer_release(shared, release_state);
        release_state.advance();
      }
      read_state.advance();
    }
    // Drain: the last slice's wgmmas, then its stage.
    gemm::ptx::wgmma_wait_group<0>();
#pragma unroll
    for (int r = 0; r < Tile::kRowBlocks; ++r) gemm::ptx::warpgroup_fence_operand(accumulator[r]);
    consumer_release(shared, release_state);
    // BEGIN EXERCISE(epilogue_turn): hand the tensor cores over, then take the epilogue's turn
    // The MMAs are retired: the other consumer may start its own now, while this one stores.
    pass_turn(&shared.mma_turn[1 - consumer]);
    // Epilogue phase: stores leave in tile order, one consumer at a time.
    wait_for_turn(&shared.epilogue_turn[consumer], epilogue_turn);
    // END EXERCISE

    // The epilogue follows wgmma's accumulator layout (lesson 07), per 64-row block r: warp w of
    // the warpgroup holds rows 16w + lane / 4 and 16w + lane / 4 + 8 of the block; accumulators
    // 4j .. 4j + 3 are columns 8j + 2 * (lane % 4) and the next one, in those two rows.
    const int lane = threadIdx.x % 32;
    const int warp_in_group = (threadIdx.x % 128) / 32;
#pragma unroll
    for (int r = 0; r < Tile::kRowBlocks; ++r) {
      const int row = row0 + r * Tile::kWarpgroupM + warp_in_group * 16 + lane / 4;
#pragma unroll
      for (int j = 0; j < Tile::kBlockN / 8; ++j) {
        const int column = col0 + j * 8 + (lane % 4) * 2;
        if (column >= n) continue;
        const float* values = &accumulator[r][4 * j];
        if (row < m)
          *reinterpret_cast<__nv_bfloat162*>(d + int64_t(row) * n + column) =
              __floats2bfloat162_rn(values[0], values[1]);
        if (row + 8 < m)
          *reinterpret_cast<__nv_bfloat162*>(d + int64_t(row + 8) * n + column) =
              __floats2bfloat162_rn(values[2], values[3]);
      }
    }
    pass_turn(&shared.epilogue_turn[1 - consumer]);

    // BEGIN EXERCISE(skip_other_tile): move this consumer's pipeline state past the slices of
    //   the other consumer's tile, which the producer loads next
    read_state.advance(k_slices);
    // END EXERCISE
  }
}

// Runs the kernel with any tile configuration (the sweep drivers under profiles/ time others).
template <class Tile>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  const int64_t tiles =
      gemm::ceil_div<int64_t>(p.m, Tile::kBlockM) * gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  // The tensor maps of A and B (lesson 08): boxes of BlockM (BlockN) rows by 64 K values,
  // 128-byte swizzle, zeros outside the matrix.
  const CUtensorMap a_map =
      gemm::make_tensor_map(args.a, gemm::kmajor_tile_map_args(p.m, p.k, Tile::kBlockM, kBlockK));
  const CUtensorMap b_map =
      gemm::make_tensor_map(args.b, gemm::kmajor_tile_map_args(p.n, p.k, Tile::kBlockN, kBlockK));
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile>>(shared_bytes);
  // NEW in lesson 11: a persistent grid of as many blocks as can be resident at once (one per SM
  // here), never more than there are tiles.
  const int64_t resident = gemm::resident_blocks<gemm_kernel<Tile>>(Tile::kThreads, shared_bytes);
  const unsigned grid = unsigned(std::min(tiles, resident));
  gemm_kernel<Tile><<<grid, Tile::kThreads, shared_bytes, stream>>>(int(p.m), int(p.n), int(p.k),
                                                                     a_map, b_map, args.d);
}

inline void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch_tile<DefaultTile>(args, stream);
}

inline constexpr gemm::Lesson kLesson{
    .id = 11,
    .parent = 10,
    .slug = "pingpong",
    .title = "ping-pong consumers: whole tiles in turns on a persistent grid",
    .launch = &launch,
    .workspace_bytes = nullptr,
    .min_arch = gemm::MinArch::sm90a,
};

}  // namespace lesson11
