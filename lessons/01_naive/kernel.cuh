// Lesson 01: one thread per output element.
//
// D = A * B^T with A (M x K) and B (N x K) row-major bf16, D (M x N) row-major bf16.
// Each thread walks one row of A and one row of B from global memory and accumulates their dot
// product in fp32. There is no reuse: every element of A is read N times and every element of B
// M times, straight from global memory (the caches catch some of it).
//
// Graded instruction signature: none
#pragma once

#include <cstdint>

#include "common/gemm.hpp"
#include "common/lesson.hpp"

namespace lesson01 {

using gemm::bf16;

constexpr int kThreadsPerBlock = 256;

__global__ void gemm_kernel(int m, int n, int k, const bf16* a, const bf16* b, bf16* d) {
  // Number the outputs row by row, one per thread: consecutive threads of a warp get consecutive
  // columns of one row of D, so the warp's 32 stores land side by side (a coalesced store).
  const int64_t index = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= int64_t(m) * n) return;  // the last block may run past the end of D
  const int64_t row = index / n;
  const int64_t col = index % n;

  const bf16* a_row = a + row * k;  // row `row` of A: K contiguous values
  const bf16* b_row = b + col * k;  // row `col` of B, i.e. column `col` of B^T

  // BEGIN EXERCISE(dot_product, declares=accumulator): accumulate the dot product of a_row
  //   and b_row in fp32
  float accumulator = 0.0f;
  for (int kk = 0; kk < k; ++kk)
    accumulator += __bfloat162float(a_row[kk]) * __bfloat162float(b_row[kk]);
  // END EXERCISE

  d[index] = __float2bfloat16(accumulator);  // round to bf16 once, at the very end
}

inline void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  const int64_t blocks = gemm::ceil_div<int64_t>(p.m * p.n, kThreadsPerBlock);
  gemm_kernel<<<unsigned(blocks), kThreadsPerBlock, 0, stream>>>(int(p.m), int(p.n), int(p.k),
                                                                  args.a, args.b, args.d);
}

// What the harness needs of the kernel: how to launch it and on which GPUs. The lesson's number,
// parent and title are in its lesson.json, which lessons/CMakeLists.txt adds to this in the
// lesson's entry, gemm::lessons::lesson01().
// The launch as the harness takes it, planned: one launch function, nothing to choose.
using Launch = gemm::OneLaunch<&launch>;

inline constexpr gemm::Lesson kLesson{
    .min_arch = gemm::MinArch::sm80,
    .plan = &Launch::plan,
    .launch_planned = &Launch::launch,
};

}  // namespace lesson01
