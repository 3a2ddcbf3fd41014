// Lesson 02: shared-memory blocking, coalesced loads and 2D register tiling on CUDA cores.
//
// A block of 256 threads computes a 128 x 128 tile of D. It walks K in steps of 16: each step
// copies a 128 x 16 slice of A and of B into shared memory (every element read from global memory
// once per block instead of once per output), then every thread computes an 8 x 8 patch of the
// tile from registers: 16 loads from shared memory feed 64 fused multiply-adds.
//
// Graded instruction signature: none
#pragma once

#include <cstdint>

#include "common/gemm.hpp"
#include "common/lesson.hpp"

namespace lesson02 {

using gemm::bf16;

constexpr int kBlockM = 128;  // rows of D per block
constexpr int kBlockN = 128;  // columns of D per block
constexpr int kBlockK = 16;   // K values per shared-memory slice
constexpr int kThreads = 256;
constexpr int kChunk = 8;     // bf16 values in one 16-byte load
constexpr int kThreadRows = 8, kThreadCols = 8;  // the register tile of one thread
static_assert(kBlockM == kBlockN, "A and B slices share one loader");
static_assert(kBlockM * (kBlockK / kChunk) == kThreads, "one 16-byte chunk per thread and slice");

// NEW in lesson 02: a slice of A (or B) goes from global memory into a shared tile, transposed
// and widened to fp32: tile[kk][row] = source[row0 + row][k0 + kk].
//
// Thread t copies one 16-byte chunk: row t % 128, chunk t / 128 (K values 0-7 or 8-15).
// Consecutive threads take consecutive rows, so the 32 shared-memory stores of a warp go to 32
// consecutive words, one per bank. Chunks past the end of the matrix (ragged M, N or K) are zeros,
// which add nothing to the dot products.
__device__ inline void load_slice_transposed(const bf16* source, int rows, int k, int row0, int k0,
                                             float (&tile)[kBlockK][kBlockM]) {
  const int row = threadIdx.x % kBlockM;
  const int chunk = threadIdx.x / kBlockM;
  const int kk = k0 + chunk * kChunk;
  uint4 values = make_uint4(0, 0, 0, 0);
  if (row0 + row < rows && kk < k)  // K % 8 == 0: a chunk is entirely inside or outside
    values = *reinterpret_cast<const uint4*>(source + int64_t(row0 + row) * k + kk);
  const bf16* v = reinterpret_cast<const bf16*>(&values);
#pragma unroll
  for (int j = 0; j < kChunk; ++j) tile[chunk * kChunk + j][row] = __bfloat162float(v[j]);
}

__global__ void __launch_bounds__(kThreads)
    gemm_kernel(int m, int n, int k, const bf16* a, const bf16* b, bf16* d) {
  // NEW in lesson 02: the block's slices of A and B, K outermost so that 4 consecutive rows of a
  // slice are 16 contiguous bytes: one float4 load.
  __shared__ __align__(16) float a_tile[kBlockK][kBlockM];
  __shared__ __align__(16) float b_tile[kBlockK][kBlockN];

  // Which 128 x 128 tile of D this block computes (tiles numbered row by row).
  const int tiles_n = gemm::ceil_div(n, kBlockN);
  const int row0 = (blockIdx.x / tiles_n) * kBlockM;
  const int col0 = (blockIdx.x % tiles_n) * kBlockN;

  // NEW in lesson 02: the 16 x 16 threads tile the 128 x 128 tile with 8 x 8 patches. A thread's
  // 8 rows are two strips of 4 (rows 4*ty.. and 64 + 4*ty..), and likewise its 8 columns, so each
  // strip is one float4 in shared memory and the 16 threads of a half-warp read 16 different,
  // consecutive float4s (no bank conflicts).
  const int ty = threadIdx.x / 16;
  const int tx = threadIdx.x % 16;
  float accumulator[kThreadRows][kThreadCols] = {};

  for (int k0 = 0; k0 < k; k0 += kBlockK) {
    load_slice_transposed(a, m, k, row0, k0, a_tile);
    load_slice_transposed(b, n, k, col0, k0, b_tile);
    // Barrier: all 256 threads wrote their chunks; now any thread may read any element.
    __syncthreads();

#pragma unroll
    for (int kk = 0; kk < kBlockK; ++kk) {
      // BEGIN EXERCISE(register_tile): load this thread's 8 values of A and 8 of B for step kk,
      //   then accumulate their 8 x 8 outer product
      float a_values[kThreadRows], b_values[kThreadCols];
#pragma unroll
      for (int strip = 0; strip < 2; ++strip) {
        const float4 a4 = *reinterpret_cast<const float4*>(&a_tile[kk][strip * 64 + ty * 4]);
        const float4 b4 = *reinterpret_cast<const float4*>(&b_tile[kk][strip * 64 + tx * 4]);
        a_values[strip * 4 + 0] = a4.x, a_values[strip * 4 + 1] = a4.y;
        a_values[strip * 4 + 2] = a4.z, a_values[strip * 4 + 3] = a4.w;
        b_values[strip * 4 + 0] = b4.x, b_values[strip * 4 + 1] = b4.y;
        b_values[strip * 4 + 2] = b4.z, b_values[strip * 4 + 3] = b4.w;
      }
#pragma unroll
      for (int i = 0; i < kThreadRows; ++i)
#pragma unroll
        for (int j = 0; j < kThreadCols; ++j) accumulator[i][j] += a_values[i] * b_values[j];
      // END EXERCISE
    }
    // Barrier: every thread finished reading the slices before the next iteration overwrites them.
    __syncthreads();
  }

  // Epilogue: each strip of 4 columns is 8 bytes of one row of D. N % 8 == 0 and the strips start
  // at multiples of 4, so a strip is either entirely inside D or entirely outside.
#pragma unroll
  for (int i = 0; i < kThreadRows; ++i) {
    const int row = row0 + (i / 4) * 64 + ty * 4 + i % 4;
    if (row >= m) continue;
#pragma unroll
    for (int strip = 0; strip < 2; ++strip) {
      const int col = col0 + strip * 64 + tx * 4;
      if (col >= n) continue;
      const float* values = &accumulator[i][strip * 4];
      __nv_bfloat162* out = reinterpret_cast<__nv_bfloat162*>(d + int64_t(row) * n + col);
      out[0] = __floats2bfloat162_rn(values[0], values[1]);
      out[1] = __floats2bfloat162_rn(values[2], values[3]);
    }
  }
}

inline void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  const int64_t tiles = gemm::ceil_div<int64_t>(p.m, kBlockM) * gemm::ceil_div<int64_t>(p.n, kBlockN);
  gemm_kernel<<<unsigned(tiles), kThreads, 0, stream>>>(int(p.m), int(p.n), int(p.k), args.a,
                                                         args.b, args.d);
}

// The launch as the harness takes it, planned: one launch function, nothing to choose.
using Launch = gemm::OneLaunch<&launch>;

inline constexpr gemm::Lesson kLesson{
    .min_arch = gemm::MinArch::sm80,
    .plan = &Launch::plan,
    .launch_planned = &Launch::launch,
};

}  // namespace lesson02
