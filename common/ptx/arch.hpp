#pragma once
// What every PTX wrapper of the course shares: the Hopper feature test and shared addresses.

#include <cstdint>

// GEMM_PTX_SM90A is 1 exactly while nvcc compiles device code for Hopper's arch-specific target
// (-gencode arch=compute_90a,code=sm_90a), and 0 otherwise: in the host pass and for every other
// target (sm_80, sm_86, ..., and a plain sm_90).
//
// Why a test at all: wgmma and setmaxnreg exist only in the "a" target (nvcc defines
// __CUDA_ARCH_FEAT_SM90_ALL for it, and only for it), TMA and the transaction-count mbarrier
// instructions only from sm_90. The course also compiles its device code for sm_80 in some
// configurations (CMAKE_CUDA_ARCHITECTURES="80;90a"), and ptxas would refuse to assemble those
// instructions there. So every Hopper wrapper is written as
//
//   #if GEMM_PTX_SM90A
//     asm volatile("...the Hopper instruction...");
//   #else
//     __trap();  // this binary was not built for sm_90a: fail loudly, never compute garbage
//   #endif
//
// The sm_80 build of a Hopper lesson is never launched (the runner refuses it before any launch),
// so the trap only has to make the code compile; if it ever runs, the kernel aborts with an error.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GEMM_PTX_SM90A 1
#else
#define GEMM_PTX_SM90A 0
#endif

#if defined(__CUDACC__)
namespace gemm::ptx {

// The 32-bit shared-state-space address of a generic pointer into shared memory: the form that
// the .shared:: operands of mbarrier, TMA and the wgmma descriptors take.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cvta
__device__ inline uint32_t shared_address(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

// ld.shared.b32: four bytes of shared memory at a 32-bit shared address (lesson 15 reads the bias
// this way: no generic address to convert, so fewer registers where the epilogue has few left).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-ld
__device__ inline uint32_t load_shared_b32(uint32_t address) {
  uint32_t value;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(value) : "r"(address) : "memory");
  return value;
}

}  // namespace gemm::ptx
#endif
