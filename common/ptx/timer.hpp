#pragma once
// The GPU's global timer, for timelines of what a kernel's roles do when
// (common/hopper/clock_trace.hpp, profiles/role_timeline.cu).

#include <cstdint>

namespace gemm::ptx {

#if defined(__CUDACC__)
// %globaltimer: a 64-bit count of nanoseconds that every SM of the GPU reads from the same clock,
// so stamps of different blocks compare directly.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#special-registers-globaltimer
__device__ inline uint64_t global_timer_ns() {
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}
#endif

}  // namespace gemm::ptx
