#pragma once
// The wgmma descriptor of one k-step of an operand tile in shared memory (lessons 07-15).
// Lesson 07 spells it out (tests/tools/test_teaching_copies.py keeps the two identical).

#include <cstdint>

#include "common/gemm.hpp"
#include "common/ptx/arch.hpp"
#include "common/wgmma_descriptor.hpp"

namespace gemm::taught {

#if defined(__CUDACC__)
// BEGIN TEACHING COPY(kstep_descriptor)
// The wgmma descriptor of k-step `step` of a K-major, 128-byte swizzled tile
// (common/wgmma_descriptor.hpp). Moving 16 elements along K inside the tile is moving the start
// address by 32 bytes: the hardware applies the swizzle to the address it computes.
__device__ inline uint64_t kstep_descriptor(const bf16* tile, int step) {
  return gemm::make_kmajor_sw128_descriptor(gemm::ptx::shared_address(tile) + step * 32);
}
// END TEACHING COPY
#endif

}  // namespace gemm::taught
