#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "common/host_device.hpp"

namespace gemm {

using bf16 = __nv_bfloat16;
using e4m3 = __nv_fp8_e4m3;  // lesson 18's operands: 1 sign, 4 exponent, 3 mantissa bits; at most 448

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

// Lesson 18's operands, which it reads instead of A and B: the same matrices in e4m3, each block
// of them divided by a scale of its own so that its largest value becomes 448, e4m3's largest:
//   A (M x K):  one fp32 scale per row and 128 values of K (a "1 x 128" block);
//   B (N x K):  one per 128 rows and 128 values of K (a "128 x 128" block).
// The value an operand stands for is its e4m3 value times its block's scale. The last blocks of a
// ragged K, M or N are partial: they have scales all the same.
//   a_scales: ceil(K / 128) rows of scale_rows(M) floats, M contiguous: the scale of A's row m in
//             K block kb is a_scales[kb * scale_rows(M) + m] (rows past M hold zeros);
//   b_scales: ceil(N / 128) rows of b_scale_stride(K) floats, K contiguous: the scale of B's
//             block (nb, kb) is b_scales[nb * b_scale_stride(K) + kb] (padding holds zeros).
// Both are the layouts cuBLASLt reads for its VEC128_32F and BLK128x128_32F scales (with our B as
// its first operand), so the course and cuBLASLt multiply the very same bytes.
struct BlockScaledOperands {
  static constexpr int kBlock = 128;  // the side of a scale block, along K (and along N for B)
  // A's scales for one K block are a row of M floats padded to whole 16 bytes, as TMA needs.
  static GEMM_HOST_DEVICE constexpr int64_t scale_rows(int64_t m) { return (m + 3) / 4 * 4; }
  static GEMM_HOST_DEVICE constexpr int64_t k_blocks(int64_t k) { return (k + kBlock - 1) / kBlock; }
  // B's scales for one block row of N are padded to whole 16 bytes too.
  static GEMM_HOST_DEVICE constexpr int64_t b_scale_stride(int64_t k) {
    return (k_blocks(k) + 3) / 4 * 4;
  }

  const e4m3* a = nullptr;         // M x K, row-major
  const e4m3* b = nullptr;         // N x K, row-major
  const float* a_scales = nullptr;
  const float* b_scales = nullptr;
};

// Lesson 18's outputs next to bf16 D, when asked for (each pointer may be null): D itself
// quantized as BlockScaledOperands' A is, in blocks of 1 x 128 along a row (N playing K's part),
// so that it can be the A of a next fp8 GEMM; and the largest magnitude of D. The e4m3 values and
// their scales are what the quantizer of common/fp8/fp8_block_scaling.hpp makes of the bf16 D, bit
// for bit.
struct BlockScaledOutput {
  e4m3* d = nullptr;                // M x N, row-major
  float* d_scales = nullptr;        // k_blocks(N) rows of scale_rows(M) floats
  unsigned int* amax_bits = nullptr;  // max |D| over the bf16 D, as the bits of a float: it must
                                      // hold 0 before the launch (the launch only raises it)
};

// What a lesson's launch() receives. Pointers are device pointers.
struct GemmArgs {
  GemmProblem problem;
  const bf16* a = nullptr;    // M x K, row-major (K contiguous)
  const bf16* b = nullptr;    // N x K, row-major (K contiguous)
  bf16* d = nullptr;          // M x N, row-major (N contiguous)
  void* workspace = nullptr;  // Lesson::workspace_bytes(problem) bytes, or nullptr if none
  Epilogue epilogue;          // plain unless the lesson has a fused epilogue (lesson 15)
  BlockScaledOperands fp8;    // lesson 18's operands (Lesson::operands); unset for the others
  BlockScaledOutput fp8_out;  // lesson 18's quantized D and amax, where wanted; none by default
};

// The largest M, N or K the contract allows: 2^30. Every kernel computes rows, columns, tile
// counts and "row + 8 < M" in 32-bit integers; below 2^30 none of those can overflow (and a
// larger matrix of bf16 would not fit in a GPU's memory for any N or K that makes sense).
inline constexpr int64_t kMaxDimension = int64_t(1) << 30;

// What the contracts below ask N and K to be multiples of: 8 bf16 values, 16 bytes, for every
// lesson; and K of lesson 18's e4m3 operands, 16 of them.
inline constexpr int kShapeMultiple = 8;
inline constexpr int kBlockScaledKMultiple = 16;

// The shape contract, identical for every lesson:
//   M >= 1;  N >= 8 and N % 8 == 0;  K >= 8 and K % 8 == 0;  each at most 2^30.
// N and K multiples of 8 make every row of A, B and D a whole number of 16-byte chunks, which
// vector loads, cp.async and TMA need. Returns the first rule the shape breaks, as one line.
std::optional<std::string> shape_contract_violation(const GemmProblem& problem);

// Lesson 18's contract: the course's, and K % 16 == 0, so that a row of e4m3 (K bytes) is a whole
// number of 16-byte chunks, as TMA needs. K need not be a multiple of the 128-wide scale blocks:
// the last block of a ragged K is partial, and TMA fills the rest of its slice with zeros.
std::optional<std::string> block_scaled_contract_violation(const GemmProblem& problem);

template <class T>
GEMM_HOST_DEVICE constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

}  // namespace gemm
