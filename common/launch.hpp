#pragma once
// Host-side launch plumbing shared by the lessons.

#include <string>

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

// How many blocks of `Kernel` can be resident on the GPU at once, with `threads` threads and
// `dynamic_shared_bytes` of dynamic shared memory per block: the SM count times the blocks per
// SM that the occupancy calculator allows. A persistent grid launches at most this many, so that
// every block is running from the start. Asked once per kernel (each kernel instance has one
// configuration) on the current device; throws CudaError if not even one block fits.
template <auto Kernel>
int resident_blocks(int threads, int dynamic_shared_bytes) {
  static const int blocks = [threads, dynamic_shared_bytes] {
    int device = 0, sm_count = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, threads,
                                                             size_t(dynamic_shared_bytes)));
    if (per_sm == 0)
      throw_cuda_error("cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                       "not one block of " + std::to_string(threads) + " threads with " +
                           std::to_string(dynamic_shared_bytes) + " bytes of shared memory fits on an SM",
                       __FILE__, __LINE__);
    return sm_count * per_sm;
  }();
  return blocks;
}

}  // namespace gemm
