#pragma once
// TMA (the Tensor Memory Accelerator): whole tiles copied from global to shared memory by one
// thread's instruction, described by a tensor map (see common/tensor_map.hpp for the host side).

#include <cstdint>

#include <cuda.h>  // CUtensorMap

#include "common/ptx/arch.hpp"

namespace gemm::ptx {

// cp.async.bulk.tensor.2d ... .tile.mbarrier::complete_tx::bytes: starts an asynchronous copy of
// one box of the tensor map, the box whose first element is at (inner_coordinate,
// outer_coordinate) (for a K-major operand: (k, row)), into shared memory at smem_destination.
// When the bytes have landed, the copy lowers `barrier`'s pending transaction count by their
// number; arm the barrier with mbarrier_arrive_expect_tx for the full box size first. Elements of
// the box outside the tensor are written as zeros (see tensor_map.hpp), so ragged edges need no
// special case; such a box still delivers, and counts, all of its bytes, so the expected count
// is the full box size at the edges too. The destination must be 128-byte aligned, and
// 1024-byte aligned for the 128B swizzle. `tensor_map` is the address of a
// `__grid_constant__ const CUtensorMap` kernel parameter, passed as a generic 64-bit address.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-tensor
__device__ inline void tma_load_2d(void* smem_destination, const CUtensorMap* tensor_map,
                                   uint64_t* barrier, int32_t inner_coordinate,
                                   int32_t outer_coordinate) {
#if GEMM_PTX_SM90A
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];"
      :
      : "r"(shared_address(smem_destination)), "l"(reinterpret_cast<uint64_t>(tensor_map)),
        "r"(shared_address(barrier)), "r"(inner_coordinate), "r"(outer_coordinate)
      : "memory");
#else
  __trap();
#endif
}

// prefetch.tensormap: brings the 128-byte tensor map into the cache ahead of the first
// tma_load_2d, so the first load of the kernel does not pay for fetching the map as well.
// Issue it once, from the thread that will issue the loads, at the start of the kernel.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-prefetch-prefetchu
__device__ inline void prefetch_tensor_map(const CUtensorMap* tensor_map) {
#if GEMM_PTX_SM90A
  asm volatile("prefetch.tensormap [%0];"
               :
               : "l"(reinterpret_cast<uint64_t>(tensor_map))
               : "memory");
#else
  __trap();
#endif
}

}  // namespace gemm::ptx
