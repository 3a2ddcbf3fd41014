#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <cuda_bf16.h>

#include "common/host_device.hpp"

namespace gemm {

using bf16 = __nv_bfloat16;

// The one problem every lesson solves:
//
//   D = A * B^T      A: M x K, B: N x K, D: M x N, all bf16 and row-major, fp32 accumulation.
//
// A and B are both "K-major": K is the contiguous dimension of each, which is the layout the
// tensor cores (mma.sync and wgmma) read without any transpose.
struct GemmProblem {
  int64_t m = 4096;
  int64_t n = 4096;
  int64_t k = 4096;

  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
};

// What a lesson's launch() receives. Pointers are device pointers.
struct GemmArgs {
  GemmProblem problem;
  const bf16* a = nullptr;    // M x K, row-major (K contiguous)
  const bf16* b = nullptr;    // N x K, row-major (K contiguous)
  bf16* d = nullptr;          // M x N, row-major (N contiguous)
  void* workspace = nullptr;  // Lesson::workspace_bytes(problem) bytes, or nullptr if none
};

// The shape contract, identical for every lesson:
//   M >= 1;  N >= 8 and N % 8 == 0;  K >= 8 and K % 8 == 0;  each at most 2^31 - 1.
// N and K multiples of 8 make every row of A, B and D a whole number of 16-byte chunks, which
// vector loads, cp.async and TMA need. Returns the first rule the shape breaks, as one line.
std::optional<std::string> shape_contract_violation(const GemmProblem& problem);

template <class T>
GEMM_HOST_DEVICE constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

}  // namespace gemm
