#pragma once
// cp.async: asynchronous 16-byte copies from global to shared memory (sm_80+), lessons 05-07.
// PTX ISA: https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async

#include <cstdint>

#include "common/ptx/arch.hpp"  // shared_address

namespace gemm::ptx {

// Copies 16 bytes from global to shared memory without passing through registers, and without
// making the thread wait: the copy completes later, in the background.
// When `in_bounds` is false nothing is read and the 16 destination bytes are filled with zeros
// (src-size 0: "zero-fill"), which is how a ragged tile edge contributes nothing to the sum.
// .cg caches the data in L2 only: each block reads a tile once, L1 would not help.
__device__ inline void cp_async_16(void* shared_destination, const void* global_source, bool in_bounds) {
  const uint32_t destination = shared_address(shared_destination);
  const uint32_t source_bytes = in_bounds ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(destination),
               "l"(global_source), "r"(source_bytes)
               : "memory");
}

// Closes the group of cp.async copies this thread issued since the last commit.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-commit-group
__device__ inline void cp_async_commit_group() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most `Pending` of this thread's committed groups are still in flight: with a ring
// of S stages and one group per stage, waiting for S - 2 means "the oldest stage has landed".
// It covers only this thread's own copies: a __syncthreads() must follow before other threads read.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-wait-group
template <int Pending>
__device__ inline void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

}  // namespace gemm::ptx
