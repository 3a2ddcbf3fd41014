#pragma once
// The quotient of two non-negative counts, as the schedules' device code divides (the work items of
// lessons 13-16, common/schedule/). A 64-bit division is a software routine on the GPU, about a
// hundred instructions long, and a Stream-K work item takes a dozen of them: a microsecond for the
// producer before its first load (measured on the H200). The counts nearly always fit in 31 bits,
// where the GPU divides in a handful of instructions; the 64-bit division remains for the rest.
// The same code on the host, unit-tested there.

#include <cstdint>

#include "common/host_device.hpp"

namespace gemm {

// n / d for n >= 0 and d > 0.
GEMM_HOST_DEVICE constexpr int64_t quotient(int64_t n, int64_t d) {
  if (((n | d) >> 31) == 0) return int64_t(uint32_t(n) / uint32_t(d));
  return n / d;
}

}  // namespace gemm
