#pragma once
// Named barriers: bar.sync / bar.arrive with a barrier id and a thread count, for synchronizing a
// subset of a block's warps (one warpgroup, say) without stopping the others. The block has 16
// hardware barriers; __syncthreads() uses id 0, so the course numbers its own from 1.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-bar-sync

#include <cstdint>

namespace gemm::ptx {

// bar.sync id, count: waits until `thread_count` threads (a multiple of 32) have arrived at barrier
// `id`, counting this one; orders the shared-memory accesses of those threads around it.
__device__ inline void named_barrier_sync(uint32_t id, uint32_t thread_count) {
  asm volatile("bar.sync %0, %1;" : : "r"(id), "r"(thread_count) : "memory");
}

// bar.arrive id, count: counts this thread at barrier `id` without waiting (a producer signalling
// waiters that use named_barrier_sync with the same count).
__device__ inline void named_barrier_arrive(uint32_t id, uint32_t thread_count) {
  asm volatile("bar.arrive %0, %1;" : : "r"(id), "r"(thread_count) : "memory");
}

}  // namespace gemm::ptx
