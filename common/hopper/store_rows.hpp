#pragma once
// The direct-store epilogue (lessons 07-14): each thread converts its accumulators to bf16 and
// stores them to D itself, in wgmma's accumulator layout (common/ptx/wgmma.hpp). Lesson 15
// replaces it by stmatrix and TMA stores.
// Lesson 07 spells it out (tests/tools/test_teaching_copies.py keeps the two identical).

#include <cstdint>

#include <cuda_bf16.h>

namespace gemm::taught {

#if defined(__CUDACC__)
// BEGIN TEACHING COPY(store_rows)
// One warpgroup's 64 rows of accumulators, for the columns col0 .. col0 + 2 * Count - 1 (Count
// fp32 per thread, as wgmma.m64nNk16 with N = 2 * Count lays them out), converted to bf16 and
// stored to rows first_row .. first_row + 63 of D. Warp w of the warpgroup holds rows
// 16w + lane / 4 and 16w + lane / 4 + 8 of the 64; accumulators 4j .. 4j + 3 are columns
// 8j + 2 * (lane % 4) and the next one, in those two rows. N % 8 == 0 and the column is even, so a
// pair is entirely inside D or outside; what lies outside D is not stored.
template <int Count>
__device__ inline void store_rows(__nv_bfloat16* d, const float (&accumulator)[Count],
                                  int first_row, int col0, int m, int n) {
  const int lane = threadIdx.x % 32;
  const int warp_in_group = (threadIdx.x % 128) / 32;
  const int row = first_row + warp_in_group * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < Count / 4; ++j) {
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
}
// END TEACHING COPY
#endif

}  // namespace gemm::taught
