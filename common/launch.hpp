#pragma once
// Host-side launch plumbing shared by the lessons.

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"

namespace gemm {

// A block may use more than 48 KB of dynamic shared memory only if its kernel was allowed to
// beforehand (cudaFuncAttributeMaxDynamicSharedMemorySize). The attribute stays set for the life
// of the process, so this asks once per kernel (the static below is one per Kernel), and checks:
// asking for more than the GPU has fails here, with the call and the reason, not at the launch.
// Call it as allow_dynamic_shared_memory<gemm_kernel<Tile>>(bytes).
template <auto Kernel>
void allow_dynamic_shared_memory(int bytes) {
  static const bool allowed = [bytes] {
    CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return true;
  }();
  (void)allowed;
}

}  // namespace gemm
