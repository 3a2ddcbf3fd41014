#pragma once

// The activations of lesson 15's fused epilogue, written once and used everywhere: by host code,
// by the fp64 CPU reference and by the kernels (the lesson's epilogue and the reference's
// elementwise SiLU). Each comes in float, what a kernel computes in, and in double, what the CPU
// reference computes in.
//
// tanhf / expf and tanh / exp name the same functions in host code (from <cmath>) and in device
// code (CUDA's math library), so one body serves both sides.

#include <cmath>

#include "common/gemm.hpp"
#include "common/host_device.hpp"

namespace gemm {

// sqrt(2 / pi), the scale inside GELU's tanh.
inline constexpr double kSqrtTwoOverPi = 0.79788456080286535588;
// The cubic coefficient of GELU's tanh form.
inline constexpr double kGeluCubic = 0.044715;

// relu(x) = max(x, 0). Written as "x < 0 ? 0 : x" rather than fmax(x, 0) so that a NaN stays a
// NaN: an activation must never turn a broken product into a plausible-looking zero.
GEMM_HOST_DEVICE inline float relu(float x) { return x < 0.0f ? 0.0f : x; }
GEMM_HOST_DEVICE inline double relu(double x) { return x < 0.0 ? 0.0 : x; }

// gelu(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): the tanh form, the one cuBLASLt's
// GELU epilogues compute (not the erf form, which differs by up to about 1e-3).
// For large |x| the cube overflows to +-inf, tanh saturates to +-1 and the result is x or -0:
// no NaN.
GEMM_HOST_DEVICE inline float gelu_tanh(float x) {
  const float inner = float(kSqrtTwoOverPi) * (x + float(kGeluCubic) * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}
GEMM_HOST_DEVICE inline double gelu_tanh(double x) {
  const double inner = kSqrtTwoOverPi * (x + kGeluCubic * x * x * x);
  return 0.5 * x * (1.0 + tanh(inner));
}

// silu(x) = x / (1 + exp(-x)), also called swish. For very negative x, exp(-x) overflows to inf
// and the result is -0, the right limit.
GEMM_HOST_DEVICE inline float silu(float x) { return x / (1.0f + expf(-x)); }
GEMM_HOST_DEVICE inline double silu(double x) { return x / (1.0 + exp(-x)); }

// The activation chosen at compile time: what a kernel specialized for one epilogue calls, so
// that the choice costs no branch in its inner loop. T is float or double.
template <Activation A, class T>
GEMM_HOST_DEVICE inline T activate(T x) {
  if constexpr (A == Activation::relu) return relu(x);
  else if constexpr (A == Activation::gelu) return gelu_tanh(x);
  else if constexpr (A == Activation::silu) return silu(x);
  else return x;
}

// The kernels' activations (lesson 15's fused epilogue), in two kinds that need no branch:
//   - none and ReLU are x, or x clamped at zero;
//   - GELU and SiLU are both x times a gate between 0 and 1 that is a tanh:
//       silu(x) = x sigmoid(x) = x (1 + tanh(x / 2)) / 2
//       gelu(x) = x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2
//     so one formula, x (1 + tanh(x (linear + cubic x^2))) / 2, computes either with its two
//     coefficients (TanhGate).
// A kernel is compiled for one kind, and the launch's activation is a value of its kind: the same
// instructions for every activation of the kind, and no branch per output.
struct TanhGate {
  float linear, cubic;
};
GEMM_HOST_DEVICE constexpr bool is_gated(Activation activation) {
  return activation == Activation::gelu || activation == Activation::silu;
}
// GELU's coefficients, or SiLU's for any other activation (the linear kind never reads them).
GEMM_HOST_DEVICE constexpr TanhGate tanh_gate_of(Activation activation) {
  return activation == Activation::gelu
             ? TanhGate{float(kSqrtTwoOverPi), float(kSqrtTwoOverPi * kGeluCubic)}
             : TanhGate{0.5f, 0.0f};
}

#if defined(__CUDACC__)
// tanh from the GPU's special-function unit: tanh.approx.f32 has a relative error of about 2^-11,
// far below the 2^-8 of the bf16 rounding that follows, while tanhf is a sequence of dozens of
// instructions, on the path between the last MMA of a tile and its stores.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#floating-point-instructions-tanh
__device__ inline float tanh_approx(float x) {
  float result;
  asm("tanh.approx.f32 %0, %1;" : "=f"(result) : "f"(x));
  return result;
}
// GELU or SiLU, as the gate's coefficients say.
__device__ inline float gated_fast(float x, TanhGate gate) {
  return 0.5f * x * (1.0f + tanh_approx(x * (gate.linear + gate.cubic * x * x)));
}
// none (at_zero false) or ReLU (true). A NaN stays a NaN, as in relu().
__device__ inline float clamped(float x, bool at_zero) { return at_zero && x < 0.0f ? 0.0f : x; }
#endif

// The activation chosen at run time: what the CPU reference calls for every element.
template <class T>
GEMM_HOST_DEVICE inline T activate(T x, Activation activation) {
  switch (activation) {
    case Activation::relu: return relu(x);
    case Activation::gelu: return gelu_tanh(x);
    case Activation::silu: return silu(x);
    case Activation::none: break;
  }
  return x;
}

}  // namespace gemm
