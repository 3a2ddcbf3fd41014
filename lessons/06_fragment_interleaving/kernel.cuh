// Lesson 06: lesson 05's kernel with fragment loads interleaved with the MMAs.
//
// Until now a warp loaded the operands of a whole 64-wide slice into registers (all 4 k-steps)
// before its first mma.sync, and at the start of every slice it waited at the barrier, then for
// its first ldmatrix, with the tensor cores idle. Here the warp loads one 16-wide k-step at a
// time into one of two register buffers, and loads step s + 1 while the MMAs of step s run
// (SMEM -> RF double buffering). The compiler already reorders loads that way within a slice; what
// it may not do is move a load across the barrier between slices. So the loop crosses that barrier
// one k-step early and loads the next slice's first fragments while the current slice's last MMAs
// run, as CUTLASS's sm80 main loop does. The README measures what each part buys.
//
// Graded instruction signature: LDGSTS LDSM HMMA
#pragma once

#include <cstdint>

#include "common/gemm.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/cp_async.hpp"
#include "common/ptx/ldmatrix.hpp"
#include "common/ptx/mma_sm80.hpp"
#include "common/swizzle.hpp"

namespace lesson06 {

using gemm::bf16;

constexpr int kBlockK = 64;  // K per shared-memory slice: rows of 128 bytes
constexpr int kChunk = 8;     // bf16 in one 16-byte chunk
constexpr int kChunksPerRow = kBlockK / kChunk;

template <int BlockM_, int BlockN_, int WarpM_, int WarpN_, int Stages_>
struct TileShape {
  static constexpr int kBlockM = BlockM_, kBlockN = BlockN_;  // the block's tile of D
  static constexpr int kWarpM = WarpM_, kWarpN = WarpN_;      // one warp's part of the tile
  static constexpr int kWarps = (kBlockM / kWarpM) * (kBlockN / kWarpN);
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 16;     // the shape of one mma.sync
  static constexpr int kMmasM = kWarpM / kMmaM;               // mma.sync blocks per warp, down M
  static constexpr int kMmasN = kWarpN / kMmaN;               // ... and across N
  static constexpr int kKSteps = kBlockK / kMmaK;             // 16-wide k-steps per slice
  static constexpr int kStages = Stages_;                     // slices in the shared-memory ring
};
// The configuration this lesson runs: 8 warps of 64 x 32 on a 128 x 128 tile, 3 stages (96 KB).
// NEW in lesson 06: half of lesson 05's warp tile. The prefetch across the barrier keeps a second
// buffer of fragments alive next to the accumulators, and with lesson 05's 64 x 64 warp tiles
// that needs more than the 255 registers a thread can have (ptxas spills 96 bytes). The README
// measures lesson 05 at both warp tiles, so the comparison stays fair.
using DefaultTile = TileShape<128, 128, 64, 32, 3>;

// The ring of slices, in dynamic shared memory (more than the 48 KB a block may declare statically).
template <class Tile>
struct SharedStorage {
  bf16 a[Tile::kStages][Tile::kBlockM * kBlockK];
  bf16 b[Tile::kStages][Tile::kBlockN * kBlockK];
};

// Where element (row, column) of a slice lives in its shared tile: 64 bf16 (128 bytes) per row,
// the 16-byte chunks of row r permuted by XOR with r % 8 (lesson 04).
__device__ inline int tile_offset(int row, int column) { return gemm::swizzled_offset(row, column); }

// Starts copying a slice of `source` (rows x k, row-major) into `tile`: rows row0.. row0 + Rows - 1,
// columns k0 .. k0 + 63. Consecutive threads copy consecutive 16-byte chunks of a row, so a warp
// reads 4 whole 128-byte rows: coalesced. Chunks outside the matrix are zero (K % 8 == 0: a chunk
// is entirely inside or outside).
// With cp.async: the copy goes from global to shared memory without passing through registers,
// and the thread does not wait for it.
template <class Tile, int Rows>
__device__ inline void load_slice_async(const bf16* source, int rows, int k, int row0, int k0,
                                        bf16* tile) {
  static_assert(Rows * kChunksPerRow % Tile::kThreads == 0, "every thread copies as many chunks");
#pragma unroll
  for (int i = 0; i < Rows * kChunksPerRow / Tile::kThreads; ++i) {
    const int index = threadIdx.x + i * Tile::kThreads;
    const int row = index / kChunksPerRow;
    const int column = (index % kChunksPerRow) * kChunk;
    const bool in_bounds = row0 + row < rows && k0 + column < k;
    // Out of bounds: point at the matrix's start (never read: cp.async reads 0 bytes, fills zeros).
    const bf16* chunk = in_bounds ? source + int64_t(row0 + row) * k + k0 + column : source;
    gemm::ptx::cp_async_16(tile + tile_offset(row, column), chunk, in_bounds);
  }
}

// NEW in lesson 06: the operands of the warp's mma.sync instructions for ONE 16-wide k-step
// (lesson 05 held a whole slice, 4 k-steps), loaded from shared memory with ldmatrix.
template <class Tile>
struct StepFragments {
  uint32_t a[Tile::kMmasM][4];  // 16 x 16 blocks of A, 4 registers of 2 bf16
  uint32_t b[Tile::kMmasN][2];  // 16 x 8 blocks of B^T, 2 registers of 2 bf16
};

template <class Tile>
__device__ inline void load_fragments(const bf16* a_tile, const bf16* b_tile, int warp_row0,
                                      int warp_col0, int step, StepFragments<Tile>& fragments) {
  const int lane = threadIdx.x % 32;
  // A: one ldmatrix.x4 per 16 x 16 block. Lane l points at row l % 16, columns 8 * (l / 16)..:
  // lanes 0-7 address matrix 0 (rows 0-7, k 0-7), lanes 8-15 matrix 1 (rows 8-15, k 0-7),
  // lanes 16-23 matrix 2 (rows 0-7, k 8-15), lanes 24-31 matrix 3: mma's a[0..3] order.
#pragma unroll
  for (int i = 0; i < Tile::kMmasM; ++i) {
    const int row = warp_row0 + i * Tile::kMmaM + lane % 16;
    const int column = step * Tile::kMmaK + (lane / 16) * 8;
    gemm::ptx::ldmatrix_x4(fragments.a[i], a_tile + tile_offset(row, column));
  }
  // B: one ldmatrix.x4 covers two 8-column blocks. Matrices in lane order: (n 0-7, k 0-7),
  // (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15) = b[0], b[1] of block j, then of j + 1.
#pragma unroll
  for (int j = 0; j < Tile::kMmasN; j += 2) {
    const int row = warp_col0 + j * Tile::kMmaN + (lane / 16) * 8 + lane % 8;
    const int column = step * Tile::kMmaK + ((lane / 8) % 2) * 8;
    uint32_t registers[4];
    gemm::ptx::ldmatrix_x4(registers, b_tile + tile_offset(row, column));
    fragments.b[j][0] = registers[0];
    fragments.b[j][1] = registers[1];
    fragments.b[j + 1][0] = registers[2];
    fragments.b[j + 1][1] = registers[3];
  }
}

template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads)
    gemm_kernel(int m, int n, int k, const bf16* a, const bf16* b, bf16* d) {
  extern __shared__ __align__(128) unsigned char shared_memory[];
  SharedStorage<Tile>& shared = *reinterpret_cast<SharedStorage<Tile>*>(shared_memory);

  const int tiles_n = gemm::ceil_div(n, Tile::kBlockN);
  const int row0 = (blockIdx.x / tiles_n) * Tile::kBlockM;
  const int col0 = (blockIdx.x % tiles_n) * Tile::kBlockN;

  // The warps form a grid over the tile (2 x 4 warps of 64 x 32 by default).
  const int warp = threadIdx.x / 32;
  const int warp_row0 = (warp / (Tile::kBlockN / Tile::kWarpN)) * Tile::kWarpM;
  const int warp_col0 = (warp % (Tile::kBlockN / Tile::kWarpN)) * Tile::kWarpN;

  // 4 x 4 mma.sync blocks of 16 x 8 outputs (by default): 4 fp32 accumulators each, laid out
  // as described in common/ptx/mma_sm80.hpp.
  float accumulator[Tile::kMmasM][Tile::kMmasN][4] = {};

  // The pipeline of lesson 05. Slice s goes into stage s % Stages. Each thread commits one
  // cp.async group per slice (possibly empty, past the end of K), so "group count" and "slice
  // number" stay in step and cp_async_wait_group<Stages - 2> always means "slice kt has landed".
  const int k_slices = gemm::ceil_div(k, kBlockK);
  const auto start_loading = [&](int slice) {
    if (slice < k_slices) {
      const int stage = slice % Tile::kStages;
      load_slice_async<Tile, Tile::kBlockM>(a, m, k, row0, slice * kBlockK, shared.a[stage]);
      load_slice_async<Tile, Tile::kBlockN>(b, n, k, col0, slice * kBlockK, shared.b[stage]);
    }
    gemm::ptx::cp_async_commit_group();
  };

  // Prologue: put the first Stages - 1 slices in flight.
  for (int slice = 0; slice < Tile::kStages - 1; ++slice) start_loading(slice);

  // NEW in lesson 06: the barrier that makes a slice visible is crossed one k-step EARLY, during
  // the last k-step of the previous slice, so that the first fragments of the next slice are
  // loaded while the MMAs of the current slice's last k-step run. Slice 0 has no previous slice:
  // its barrier is crossed here, before the loop.
  gemm::ptx::cp_async_wait_group<Tile::kStages - 2>();
  // Barrier: every thread's copies of slice 0 have landed.
  __syncthreads();
  start_loading(Tile::kStages - 1);

  // NEW in lesson 06: two fragment buffers of one k-step each. While the MMAs of step s read
  // buffer s % 2, the ldmatrix of the next step (the next slice's step 0 after the last step)
  // fills the other one. Steps per slice are even, so every slice starts in buffer 0.
  static_assert(Tile::kKSteps % 2 == 0, "each slice starts with its fragments in buffer 0");
  StepFragments<Tile> fragments[2];
  load_fragments(shared.a[0], shared.b[0], warp_row0, warp_col0, 0, fragments[0]);

  for (int kt = 0; kt < k_slices; ++kt) {
    const int stage = kt % Tile::kStages;
#pragma unroll
    for (int step = 0; step < Tile::kKSteps; ++step) {
      // BEGIN EXERCISE(interleave): load the fragments of the next k-step into the other buffer
      //   (at the last step: cross the barrier of slice kt + 1 and load its step 0), then run the
      //   MMAs of this step
      if (step + 1 < Tile::kKSteps) {
        load_fragments(shared.a[stage], shared.b[stage], warp_row0, warp_col0, step + 1,
                       fragments[(step + 1) % 2]);
      } else {
        // The last k-step: its fragments are already in registers, so this warp is done reading
        // slice kt. Wait until this thread's copies of slice kt + 1 have landed ...
        gemm::ptx::cp_async_wait_group<Tile::kStages - 2>();
        // ... and barrier: every thread's copies of slice kt + 1 have landed, so any warp may
        // read it; and every warp has finished reading slice kt, so its stage is free (it is
        // refilled below, after this step's MMAs, when fewer registers are in use).
        __syncthreads();
        const int next_stage = (kt + 1) % Tile::kStages;
        load_fragments(shared.a[next_stage], shared.b[next_stage], warp_row0, warp_col0, 0,
                       fragments[0]);
      }
      const StepFragments<Tile>& current = fragments[step % 2];
#pragma unroll
      for (int i = 0; i < Tile::kMmasM; ++i)
#pragma unroll
        for (int j = 0; j < Tile::kMmasN; ++j)
          gemm::ptx::mma_m16n8k16_bf16(accumulator[i][j], current.a[i], current.b[j]);
      // END EXERCISE
    }
    // Refill slice kt's stage with slice kt + Stages, in the background.
    start_loading(kt + Tile::kStages);
  }

  // Epilogue: lane l holds rows l / 4 and l / 4 + 8 of each 16 x 8 block, two adjacent columns
  // each; N % 8 == 0 and the column is even, so a pair is entirely inside D or outside.
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < Tile::kMmasM; ++i)
#pragma unroll
    for (int j = 0; j < Tile::kMmasN; ++j) {
      const int row = row0 + warp_row0 + i * Tile::kMmaM + lane / 4;
      const int column = col0 + warp_col0 + j * Tile::kMmaN + (lane % 4) * 2;
      if (column >= n) continue;
      const float* values = accumulator[i][j];
      if (row < m)
        *reinterpret_cast<__nv_bfloat162*>(d + int64_t(row) * n + column) =
            __floats2bfloat162_rn(values[0], values[1]);
      if (row + 8 < m)
        *reinterpret_cast<__nv_bfloat162*>(d + int64_t(row + 8) * n + column) =
            __floats2bfloat162_rn(values[2], values[3]);
    }
}

// Runs the kernel with any tile configuration (the sweep drivers under profiles/ time others).
template <class Tile>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  const int64_t tiles =
      gemm::ceil_div<int64_t>(p.m, Tile::kBlockM) * gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  // More than 48 KB of dynamic shared memory must be allowed explicitly.
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>);
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile>>(shared_bytes);
  gemm_kernel<Tile><<<unsigned(tiles), Tile::kThreads, shared_bytes, stream>>>(
      int(p.m), int(p.n), int(p.k), args.a, args.b, args.d);
}

inline void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch_tile<DefaultTile>(args, stream);
}

// The launch as the harness takes it, planned: one launch function, nothing to choose.
using Launch = gemm::OneLaunch<&launch>;

inline constexpr gemm::Lesson kLesson{
    .min_arch = gemm::MinArch::sm80,
    .plan = &Launch::plan,
    .launch_planned = &Launch::launch,
};

}  // namespace lesson06
