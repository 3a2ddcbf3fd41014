#pragma once
// How a block of values becomes e4m3 (common/fp8/fp8_block_scaling.hpp says why): the scale of a
// block is amax / 448, amax its largest magnitude and 448 e4m3's largest finite value (a block of
// zeros gets 1); a value is multiplied by the reciprocal of its block's scale (1 / scale, rounded
// once per block: a multiplication per value where a division would be a dozen instructions) and
// rounded to the nearest e4m3, ties to even, saturating at +-448. The quantizer of lesson 18's
// inputs and lesson 18's epilogue, which writes D in the same form, both round with these, so the
// two agree bit for bit.

#include <cuda_fp8.h>

#include "common/gemm.hpp"

namespace gemm {

inline constexpr float kE4m3Max = 448.0f;

#if defined(__CUDACC__)
__device__ inline float e4m3_scale_for(float amax) { return amax > 0.0f ? amax / kE4m3Max : 1.0f; }

// What e4m3_bits multiplies by: the scale's reciprocal, rounded once per block (the one place
// that says how, so that every quantizer of the course rounds it alike).
__device__ inline float e4m3_inverse_scale(float scale) { return 1.0f / scale; }

// value * inverse_scale (e4m3_inverse_scale of the block's scale), rounded to the nearest e4m3 (saturating), as its
// byte.
__device__ inline uint8_t e4m3_bits(float value, float inverse_scale) {
  return uint8_t(__nv_cvt_float_to_fp8(value * inverse_scale, __NV_SATFINITE, __NV_E4M3));
}
#endif

}  // namespace gemm
