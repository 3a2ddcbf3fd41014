#pragma once
// stmatrix: a warp stores 8 x 8 matrices of 16-bit elements from registers to shared memory, the
// inverse of ldmatrix (sm_90), lesson 15's epilogue.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#warp-level-matrix-instructions-stmatrix

#include <cstdint>

#include "common/ptx/arch.hpp"

namespace gemm::ptx {

// Stores four 8 x 8 bf16 matrices. Every lane holds one 32-bit register (two bf16) of each matrix
// q: registers[q] is row lane / 4, columns 2 * (lane % 4) and 2 * (lane % 4) + 1 of matrix q,
// exactly the layout of an mma / wgmma accumulator pair after conversion. Lanes 8q .. 8q + 7 give
// the shared-memory address of the 16-byte rows 0 .. 7 of matrix q.
__device__ inline void stmatrix_x4(uint32_t shared_row_address, uint32_t register0, uint32_t register1,
                                   uint32_t register2, uint32_t register3) {
#if GEMM_PTX_SM90A
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
               :
               : "r"(shared_row_address), "r"(register0), "r"(register1), "r"(register2),
                 "r"(register3)
               : "memory");
#else
  __trap();
#endif
}

}  // namespace gemm::ptx
