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

// The activation of lesson 15's fused epilogue.
//   relu(x) = max(x, 0)
//   gelu(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))   (the tanh form, as cuBLASLt)
//   silu(x) = x / (1 + exp(-x))
enum class Activation { none, relu, gelu, silu };

// "none", "relu", "gelu", "silu".
const char* activation_name(Activation activation);
// The inverse of activation_name; nothing for an unknown name.
std::optional<Activation> parse_activation(const std::string& name);

// The epilogue of lesson 15:
//
//   D = act(alpha * (A * B^T) + beta * C + bias)
//
// with C an M x N bf16 row-major matrix (read only when beta != 0) and bias a vector of N bf16
// values, one per column of D (added to every row). The default is the plain product that
// lessons 01-14 compute: alpha = 1, beta = 0, no bias, no activation; the harness never hands
// those lessons anything else (Lesson::fused_epilogue).
struct Epilogue {
  float alpha = 1.0f;
  float beta = 0.0f;
  const bf16* c = nullptr;     // M x N, row-major; used when beta != 0; may be D itself
  const bf16* bias = nullptr;  // N values; nullptr: no bias
  Activation activation = Activation::none;

  bool is_plain() const {
    return alpha == 1.0f && beta == 0.0f && bias == nullptr && activation == Activation::none;
  }
};

// What a lesson's launch() receives. Pointers are device pointers.
struct GemmArgs {
  GemmProblem problem;
  const bf16* a = nullptr;    // M x K, row-major (K contiguous)
  const bf16* b = nullptr;    // N x K, row-major (K contiguous)
  bf16* d = nullptr;          // M x N, row-major (N contiguous)
  void* workspace = nullptr;  // Lesson::workspace_bytes(problem) bytes, or nullptr if none
  Epilogue epilogue;          // plain unless the lesson has a fused epilogue (lesson 15)
};

// The largest M, N or K the contract allows: 2^30. Every kernel computes rows, columns, tile
// counts and "row + 8 < M" in 32-bit integers; below 2^30 none of those can overflow (and a
// larger matrix of bf16 would not fit in a GPU's memory for any N or K that makes sense).
inline constexpr int64_t kMaxDimension = int64_t(1) << 30;

// The shape contract, identical for every lesson:
//   M >= 1;  N >= 8 and N % 8 == 0;  K >= 8 and K % 8 == 0;  each at most 2^30.
// N and K multiples of 8 make every row of A, B and D a whole number of 16-byte chunks, which
// vector loads, cp.async and TMA need. Returns the first rule the shape breaks, as one line.
std::optional<std::string> shape_contract_violation(const GemmProblem& problem);

template <class T>
GEMM_HOST_DEVICE constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

}  // namespace gemm
