#pragma once
// Loads and stores with explicit memory ordering, for flags that blocks hand each other: at GPU
// scope between the SMs of one GPU (lesson 14's Stream-K fixup), at system scope between GPUs
// that map each other's memory (lesson 19's one-shot exchange and its low-latency words).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#memory-consistency-model

#include <cstdint>

namespace gemm::ptx {

// ld.acquire.gpu: reads the flag; every write that the writer made before its releasing store
// (store_release_gpu) of this value is visible to this thread after it.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-ld
__device__ inline uint32_t load_acquire_gpu(const uint32_t* flag) {
  uint32_t value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

// st.release.gpu: writes the flag after every earlier write of this thread, and of the threads
// that met it at a barrier before, is visible at GPU scope (release is cumulative).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-st
__device__ inline void store_release_gpu(uint32_t* flag, uint32_t value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" : : "l"(flag), "r"(value) : "memory");
}

// ld.acquire.sys: as load_acquire_gpu, for a flag that a thread on another GPU writes into this
// GPU's memory over NVLink (or PCIe).
__device__ inline uint32_t load_acquire_sys(const uint32_t* flag) {
  uint32_t value;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

// st.release.sys: as store_release_gpu, visible to threads on every GPU that maps the memory (the
// flag may live in another GPU's memory).
__device__ inline void store_release_sys(uint32_t* flag, uint32_t value) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" : : "l"(flag), "r"(value) : "memory");
}

// st.relaxed.sys.global.v2.u64 and ld.relaxed.sys.global.v2.u64: two 64-bit words (16 bytes,
// 16-byte aligned) that a thread on another GPU reads. Each naturally aligned 64-bit word is
// single-copy atomic: the reader sees all of one write of it or all of another, never half of
// each (the two words of a pair are not: one may arrive before the other). Lesson 19's low-latency
// exchange puts 32 bits of data and a 32-bit flag in each word, so a reader that sees a word's flag
// sees the data that came with it, and needs no fence and no second signal.
__device__ inline void store_relaxed_sys_pair(uint64_t* words, uint64_t first, uint64_t second) {
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};"
               :
               : "l"(words), "l"(first), "l"(second)
               : "memory");
}

__device__ inline void load_relaxed_sys_pair(const uint64_t* words, uint64_t& first,
                                             uint64_t& second) {
  asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(first), "=l"(second)
               : "l"(words)
               : "memory");
}

}  // namespace gemm::ptx
