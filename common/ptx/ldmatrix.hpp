#pragma once
// ldmatrix: a warp loads 8 x 8 matrices of 16-bit elements from shared memory straight into the
// register layout mma.sync expects (sm_75+), lessons 03-06.
// PTX ISA: https://docs.nvidia.com/cuda/parallel-thread-execution/#warp-level-matrix-instructions-ldmatrix

#include <cstdint>

#include "common/ptx/arch.hpp"  // shared_address

namespace gemm::ptx {

// Loads four 8 x 8 bf16 matrices. Lanes 8q .. 8q+7 each give the shared-memory address of one
// 16-byte row of matrix q (q = 0..3); afterwards every lane holds two elements of each matrix:
// registers[q] holds row lane / 4, columns 2 * (lane % 4) and 2 * (lane % 4) + 1 of matrix q.
// The hardware reads the 8 rows of one matrix in one pass ("phase"): if two of those 8 rows lie
// in the same shared-memory bank, the pass is repeated (a bank conflict).
__device__ inline void ldmatrix_x4(uint32_t (&registers)[4], uint32_t shared_row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(registers[0]), "=r"(registers[1]), "=r"(registers[2]), "=r"(registers[3])
               : "r"(shared_row_address)
               // "memory": the instruction reads shared memory, so the compiler must not move it
               // above the stores (or the barrier) that fill the tile.
               : "memory");
}

// The same load from a generic pointer into shared memory.
__device__ inline void ldmatrix_x4(uint32_t (&registers)[4], const void* shared_row_address) {
  ldmatrix_x4(registers, shared_address(shared_row_address));
}


}  // namespace gemm::ptx
