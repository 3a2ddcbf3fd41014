// Lesson 04: lesson 03's kernel with XOR-swizzled shared tiles.
//
// In lesson 03 the 8 rows that one ldmatrix phase reads all start at the same bank (rows are 128
// bytes, exactly the width of the 32 banks), so each phase is served in 8 passes. Here each
// 16-byte chunk of a row is stored at a position XORed with the row number (common/swizzle.hpp):
// the 8 rows of a phase now fall in 8 different bank groups and each phase takes one pass.
//
// Graded instruction signature: HMMA LDSM
#pragma once

#include <cstdint>

#include "common/gemm.hpp"
#include "common/lesson.hpp"
#include "common/ptx/ldmatrix.hpp"
#include "common/ptx/mma_sm80.hpp"
#include "common/swizzle.hpp"

namespace lesson04 {

using gemm::bf16;

constexpr int kBlockK = 64;  // K per shared-memory slice: rows of 128 bytes
constexpr int kChunk = 8;     // bf16 in one 16-byte chunk
constexpr int kChunksPerRow = kBlockK / kChunk;

template <int BlockM_, int BlockN_, int WarpM_, int WarpN_>
struct TileShape {
  static constexpr int kBlockM = BlockM_, kBlockN = BlockN_;  // the block's tile of D
  static constexpr int kWarpM = WarpM_, kWarpN = WarpN_;      // one warp's part of the tile
  static constexpr int kWarps = (kBlockM / kWarpM) * (kBlockN / kWarpN);
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 16;     // the shape of one mma.sync
  static constexpr int kMmasM = kWarpM / kMmaM;               // mma.sync blocks per warp, down M
  static constexpr int kMmasN = kWarpN / kMmaN;               // ... and across N
  static constexpr int kKSteps = kBlockK / kMmaK;             // 16-wide k-steps per slice
};
// The configuration this lesson runs: 4 warps of 64 x 64 on a 128 x 128 tile.
using DefaultTile = TileShape<128, 128, 64, 64>;

// NEW in lesson 04: where element (row, column) of a slice lives in its shared tile: 64 bf16
// (128 bytes) per row, the 16-byte chunks of row r permuted by XOR with r % 8. Everything that
// reads or writes a tile goes through this one function, so nothing else changes. It runs on
// the host too, where the grader checks the layout for bank conflicts.
GEMM_HOST_DEVICE inline int tile_offset(int row, int column) {
  // BEGIN EXERCISE(swizzle, returns, host-check=swizzle_bank_conflicts): store logical 16-byte
  //   chunk c of row r at chunk c ^ (r % 8)
  return gemm::swizzled_offset(row, column);
  // END EXERCISE
}

// Copies a slice of `source` (rows x k, row-major) into `tile`: rows row0.. row0 + Rows - 1,
// columns k0 .. k0 + 63. Consecutive threads copy consecutive 16-byte chunks of a row, so a warp
// reads 4 whole 128-byte rows: coalesced. Chunks outside the matrix are zero (K % 8 == 0: a chunk
// is entirely inside or outside).
template <class Tile, int Rows>
__device__ inline void load_slice(const bf16* source, int rows, int k, int row0, int k0, bf16* tile) {
  static_assert(Rows * kChunksPerRow % Tile::kThreads == 0, "every thread copies as many chunks");
#pragma unroll
  for (int i = 0; i < Rows * kChunksPerRow / Tile::kThreads; ++i) {
    const int index = threadIdx.x + i * Tile::kThreads;
    const int row = index / kChunksPerRow;
    const int column = (index % kChunksPerRow) * kChunk;
    uint4 chunk = make_uint4(0, 0, 0, 0);
    if (row0 + row < rows && k0 + column < k)
      chunk = *reinterpret_cast<const uint4*>(source + int64_t(row0 + row) * k + k0 + column);
    *reinterpret_cast<uint4*>(tile + tile_offset(row, column)) = chunk;
  }
}

// The operands of the warp's mma.sync instructions for one whole slice, loaded from shared
// memory with ldmatrix.
template <class Tile>
struct SliceFragments {
  uint32_t a[Tile::kKSteps][Tile::kMmasM][4];  // 16 x 16 blocks of A, 4 registers of 2 bf16
  uint32_t b[Tile::kKSteps][Tile::kMmasN][2];  // 16 x 8 blocks of B^T, 2 registers of 2 bf16
};

template <class Tile>
__device__ inline void load_fragments(const bf16* a_tile, const bf16* b_tile, int warp_row0,
                                      int warp_col0, SliceFragments<Tile>& fragments) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int step = 0; step < Tile::kKSteps; ++step) {
    // A: one ldmatrix.x4 per 16 x 16 block. Lane l points at row l % 16, columns 8 * (l / 16)..:
    // lanes 0-7 address matrix 0 (rows 0-7, k 0-7), lanes 8-15 matrix 1 (rows 8-15, k 0-7),
    // lanes 16-23 matrix 2 (rows 0-7, k 8-15), lanes 24-31 matrix 3: mma's a[0..3] order.
#pragma unroll
    for (int i = 0; i < Tile::kMmasM; ++i) {
      const int row = warp_row0 + i * Tile::kMmaM + lane % 16;
      const int column = step * Tile::kMmaK + (lane / 16) * 8;
      gemm::ptx::ldmatrix_x4(fragments.a[step][i], a_tile + tile_offset(row, column));
    }
    // B: one ldmatrix.x4 covers two 8-column blocks. Matrices in lane order: (n 0-7, k 0-7),
    // (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15) = b[0], b[1] of block j, then of j + 1.
#pragma unroll
    for (int j = 0; j < Tile::kMmasN; j += 2) {
      const int row = warp_col0 + j * Tile::kMmaN + (lane / 16) * 8 + lane % 8;
      const int column = step * Tile::kMmaK + ((lane / 8) % 2) * 8;
      uint32_t registers[4];
      gemm::ptx::ldmatrix_x4(registers, b_tile + tile_offset(row, column));
      fragments.b[step][j][0] = registers[0];
      fragments.b[step][j][1] = registers[1];
      fragments.b[step][j + 1][0] = registers[2];
      fragments.b[step][j + 1][1] = registers[3];
    }
  }
}

template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads)
    gemm_kernel(int m, int n, int k, const bf16* a, const bf16* b, bf16* d) {
  __shared__ __align__(128) bf16 a_tile[Tile::kBlockM * kBlockK];
  __shared__ __align__(128) bf16 b_tile[Tile::kBlockN * kBlockK];

  const int tiles_n = gemm::ceil_div(n, Tile::kBlockN);
  const int row0 = (blockIdx.x / tiles_n) * Tile::kBlockM;
  const int col0 = (blockIdx.x % tiles_n) * Tile::kBlockN;

  // The warps form a grid over the tile (2 x 2 warps of 64 x 64 by default).
  const int warp = threadIdx.x / 32;
  const int warp_row0 = (warp / (Tile::kBlockN / Tile::kWarpN)) * Tile::kWarpM;
  const int warp_col0 = (warp % (Tile::kBlockN / Tile::kWarpN)) * Tile::kWarpN;

  // 4 x 8 mma.sync blocks of 16 x 8 outputs (by default): 4 fp32 accumulators each, laid out
  // as described in common/ptx/mma_sm80.hpp.
  float accumulator[Tile::kMmasM][Tile::kMmasN][4] = {};

  for (int k0 = 0; k0 < k; k0 += kBlockK) {
    load_slice<Tile, Tile::kBlockM>(a, m, k, row0, k0, a_tile);
    load_slice<Tile, Tile::kBlockN>(b, n, k, col0, k0, b_tile);
    // Barrier: the slices are complete before any warp reads them.
    __syncthreads();

    SliceFragments<Tile> fragments;
    load_fragments(a_tile, b_tile, warp_row0, warp_col0, fragments);
#pragma unroll
    for (int step = 0; step < Tile::kKSteps; ++step)
#pragma unroll
      for (int i = 0; i < Tile::kMmasM; ++i)
#pragma unroll
        for (int j = 0; j < Tile::kMmasN; ++j)
          gemm::ptx::mma_m16n8k16_bf16(accumulator[i][j], fragments.a[step][i], fragments.b[step][j]);
    // Barrier: every warp has read the slices before the next iteration overwrites them.
    __syncthreads();
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
  gemm_kernel<Tile><<<unsigned(tiles), Tile::kThreads, 0, stream>>>(
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

}  // namespace lesson04
