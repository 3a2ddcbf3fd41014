#pragma once
// Dynamic shared memory aligned for Hopper's swizzled tiles (lessons 07+).

#include <cstddef>
#include <cstdint>

namespace gemm {

// The 128-byte swizzle pattern repeats every 1024 bytes (8 rows of 128 bytes), and both TMA and
// wgmma apply it to the shared-memory address itself: a swizzled tile must start on a 1024-byte
// boundary or wgmma silently reads the wrong elements. The dynamic shared memory of a block is
// only guaranteed 16-byte alignment, so kernels ask for kSharedAlignment extra bytes and round up.
inline constexpr size_t kSharedAlignment = 1024;

// The most dynamic shared memory one block may use on Hopper (sm_90): 227 KB of the SM's 228 KB
// (cudaDevAttrMaxSharedMemoryPerBlockOptin on an H100).
inline constexpr size_t kMaxSharedBytesPerBlock = 227 * 1024;

#if defined(__CUDACC__)
// The kernel's shared storage, at the first 1024-byte boundary of the dynamic shared memory.
template <class Storage>
__device__ inline Storage& aligned_shared_storage(unsigned char* dynamic_shared_memory) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(dynamic_shared_memory);
  const uintptr_t aligned = (address + kSharedAlignment - 1) & ~uintptr_t(kSharedAlignment - 1);
  return *reinterpret_cast<Storage*>(aligned);
}
#endif

}  // namespace gemm
