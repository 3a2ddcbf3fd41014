#pragma once
// mma.sync: the warp-level tensor-core instruction of Ampere, still available on Hopper
// (lessons 03-06). Hopper's faster path is wgmma (lesson 07).
// PTX ISA: https://docs.nvidia.com/cuda/parallel-thread-execution/#warp-level-matrix-instructions-mma

#include <cstdint>

namespace gemm::ptx {

// D (16 x 8, fp32) += A (16 x 16, bf16, row-major) * B (16 x 8, bf16, "col-major", i.e. stored
// as 8 rows of 16 K values: exactly how the course stores B, N x K with K contiguous).
// Per lane (g = lane / 4, t = lane % 4), each register holding two bf16:
//   a[0]: A[g][2t..2t+1]      a[1]: A[g+8][2t..2t+1]   a[2]: A[g][2t+8..]   a[3]: A[g+8][2t+8..]
//   b[0]: B[k = 2t..2t+1][n = g]                       b[1]: B[k = 2t+8..2t+9][n = g]
//   d[0], d[1]: D[g][2t], D[g][2t+1]                   d[2], d[3]: D[g+8][2t], D[g+8][2t+1]
// https://docs.nvidia.com/cuda/parallel-thread-execution/#warp-level-matrix-fragment-mma-16816-float
__device__ inline void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace gemm::ptx
