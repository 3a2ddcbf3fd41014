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

// The same copy, multicast (lesson 12): one load from L2 is written into the shared memory of
// every CTA of the cluster whose bit is set in `cta_mask` (bit r: rank r), at the same offset
// as `smem_destination` in this CTA, and each of those CTAs' barrier at `barrier`'s offset counts
// the bytes it received. Each receiving CTA must therefore have armed its own barrier for them.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-tensor
__device__ inline void tma_load_2d_multicast(void* smem_destination, const CUtensorMap* tensor_map,
                                             uint64_t* barrier, int32_t inner_coordinate,
                                             int32_t outer_coordinate, uint16_t cta_mask) {
#if GEMM_PTX_SM90A
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;"
      :
      : "r"(shared_address(smem_destination)), "l"(reinterpret_cast<uint64_t>(tensor_map)),
        "r"(shared_address(barrier)), "r"(inner_coordinate), "r"(outer_coordinate), "h"(cta_mask)
      : "memory");
#else
  __trap();
#endif
}

// cp.async.bulk.tensor.2d ... .bulk_group (lesson 15): the TMA store, the copy the other way. One
// thread starts writing the box at (inner_coordinate, outer_coordinate) of the tensor from shared
// memory at smem_source (laid out as the tensor map's swizzle says). Elements of the box outside
// the tensor are not written: ragged edges are clipped. The copy reads shared memory through the
// async proxy: threads that wrote smem_source with ordinary stores (or stmatrix) must each execute
// fence_proxy_async_shared_cta() before the barrier that precedes this call. It joins the issuing
// thread's current bulk group (bulk_commit_group).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-tensor
__device__ inline void tma_store_2d(const CUtensorMap* tensor_map, const void* smem_source,
                                    int32_t inner_coordinate, int32_t outer_coordinate) {
#if GEMM_PTX_SM90A
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];"
               :
               : "l"(reinterpret_cast<uint64_t>(tensor_map)), "r"(shared_address(smem_source)),
                 "r"(inner_coordinate), "r"(outer_coordinate)
               : "memory");
#else
  __trap();
#endif
}

// cp.async.bulk.prefetch.tensor.2d.L2 (lesson 15): starts bringing one box of the tensor into L2,
// and nothing more: no shared memory, no barrier, no completion to wait for. A later load of the
// box then finds it in L2 instead of DRAM.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-prefetch-tensor
__device__ inline void tma_prefetch_2d_l2(const CUtensorMap* tensor_map, int32_t inner_coordinate,
                                          int32_t outer_coordinate) {
#if GEMM_PTX_SM90A
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];"
               :
               : "l"(reinterpret_cast<uint64_t>(tensor_map)), "r"(inner_coordinate),
                 "r"(outer_coordinate)
               : "memory");
#else
  __trap();
#endif
}

// cp.async.bulk.commit_group: closes this thread's bulk copies issued since the last commit
// (TMA stores) into one bulk group.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-commit-group
__device__ inline void bulk_commit_group() {
#if GEMM_PTX_SM90A
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#else
  __trap();
#endif
}

// cp.async.bulk.wait_group.read N: waits until at most N of THIS THREAD's committed bulk groups
// still read their shared-memory source. Afterwards the older groups' source buffers may be
// overwritten (their writes to global memory may still be in flight). Only the thread that
// committed the groups may wait for them: other threads must learn it through a barrier.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-wait-group
template <int N>
__device__ inline void bulk_wait_group_read() {
#if GEMM_PTX_SM90A
  asm volatile("cp.async.bulk.wait_group.read %0;" : : "n"(N) : "memory");
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
