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

#if defined(__CUDACC__)
// The kernels' versions of GELU and SiLU (lesson 15's epilogue): the same formulas, with tanh and
// exp from the GPU's special-function unit. tanh.approx.f32 has a relative error of about 2^-11
// and __expf about 2^-21, both far below the 2^-8 of the bf16 rounding that follows, while
// tanhf and expf are sequences of dozens of instructions, on the path between the last MMA of a
// tile and its stores.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#floating-point-instructions-tanh
__device__ inline float tanh_approx(float x) {
  float result;
  asm("tanh.approx.f32 %0, %1;" : "=f"(result) : "f"(x));
  return result;
}
__device__ inline float gelu_tanh_fast(float x) {
  const float inner = float(kSqrtTwoOverPi) * (x + float(kGeluCubic) * x * x * x);
  return 0.5f * x * (1.0f + tanh_approx(inner));
}
__device__ inline float silu_fast(float x) { return __fdividef(x, 1.0f + __expf(-x)); }

// The activation chosen at run time, with the fast GELU and SiLU (device code, float): what the
// final kernel's fused epilogue calls, with the launch's activation, the same in every thread.
__device__ inline float activate_fast(float x, Activation activation) {
  switch (activation) {
    case Activation::relu: return relu(x);
    case Activation::gelu: return gelu_tanh_fast(x);
    case Activation::silu: return silu_fast(x);
    case Activation::none: break;
  }
  return x;
}
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
