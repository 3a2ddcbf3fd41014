#pragma once
// Lesson 18's inputs on the device: bf16 matrices quantized to e4m3 with fp32 block scales
// (gemm::BlockScaledOperands), with one scale per tensor (cuBLASLt's per-tensor fp8, for
// comparison), and back to fp32 for the reference.
//
// Quantizing a block: its scale is amax / 448, where amax is the block's largest magnitude and
// 448 e4m3's largest finite value; every value is multiplied by the scale's reciprocal and rounded
// to the nearest e4m3 (ties to even), saturating at +-448 (common/fp8/e4m3_rounding.hpp). So each
// block's largest value becomes exactly +-448: every block uses e4m3's whole range, whatever its
// magnitude. A block of zeros gets the scale 1.
// e4m3 keeps 3 mantissa bits: a value in a block's upper octave is rounded by at most 2^-4 of
// itself, and values far below the block's largest lose more (down to e4m3's subnormals, 2^-9).

#include <cstdint>

#include <cuda_runtime_api.h>

#include "common/device_buffer.hpp"
#include "common/fp8/e4m3_rounding.hpp"  // kE4m3Max, the rounding itself
#include "common/gemm.hpp"

namespace gemm {

// How far apart the inputs' blocks are in magnitude when the harness makes lesson 18's inputs:
// each block of A (1 x 128) and of B (128 x 128) is multiplied by 2^e, e a whole number drawn
// from -kBlockMagnitudeOctaves .. kBlockMagnitudeOctaves, so that the scales span about ten orders
// of magnitude and a scale taken from the wrong block is far off.
inline constexpr int kBlockMagnitudeOctaves = 16;

// Multiplies each block of `block_rows` x 128 values of the row-major rows x k matrix by its
// power of two (exact in bf16), drawn from `seed`.
void spread_block_magnitudes(bf16* matrix, int64_t rows, int64_t k, int block_rows, uint64_t seed,
                             cudaStream_t stream);

// A (M x K) quantized in 1 x 128 blocks: e4m3 values and a_scales as BlockScaledOperands lays
// them out.
void quantize_1x128(const bf16* a, int64_t m, int64_t k, e4m3* values, float* scales,
                    cudaStream_t stream);
// B (N x K) quantized in 128 x 128 blocks, b_scales as BlockScaledOperands lays them out.
void quantize_128x128(const bf16* b, int64_t n, int64_t k, e4m3* values, float* scales,
                      cudaStream_t stream);
// A whole matrix with one scale (amax / 448 of all of it), written to *scale on the device.
void quantize_per_tensor(const bf16* matrix, int64_t count, e4m3* values, float* scale,
                         cudaStream_t stream);

// The values the block-scaled operands stand for, e4m3 value times scale, in fp32 (rounded once,
// by at most 2^-24 of itself: a 4-bit significand times a 24-bit one). M x K and N x K, row-major.
void dequantize(const GemmProblem& problem, const BlockScaledOperands& operands, float* a,
                float* b, cudaStream_t stream);

// x[i] = |x[i]|, for the magnitudes of the error bound.
void absolute_values(float* values, int64_t count, cudaStream_t stream);

// The block-scaled e4m3 copies of A and B that lesson 18 reads, and the per-tensor ones that
// cuBLASLt's per-tensor fp8 reads, owned together.
class BlockScaledInputs {
 public:
  // Quantizes A (M x K) and B (N x K): block-scaled, and per tensor.
  void quantize(const GemmProblem& problem, const bf16* a, const bf16* b, cudaStream_t stream);
  // The block-scaled part alone, into the buffers the last quantize() made for this problem (what
  // lesson 18's run times as the quantization).
  void quantize_blocks(const GemmProblem& problem, const bf16* a, const bf16* b,
                       cudaStream_t stream);
  BlockScaledOperands operands() const;
  const e4m3* per_tensor_a() const { return per_tensor_a_.get(); }
  const e4m3* per_tensor_b() const { return per_tensor_b_.get(); }
  // One scale each, 16 bytes apart (cuBLASLt reads a scale only from a 16-byte aligned address).
  const float* per_tensor_a_scale() const { return per_tensor_scales_.get(); }
  const float* per_tensor_b_scale() const { return per_tensor_scales_.get() + kScaleSpacing; }

 private:
  static constexpr int kScaleSpacing = 4;  // floats
  DeviceBuffer<e4m3> a_, b_, per_tensor_a_, per_tensor_b_;
  DeviceBuffer<float> a_scales_, b_scales_, per_tensor_scales_;
};

// The values the per-tensor copies stand for (e4m3 value times the tensor's one scale), in fp32,
// as dequantize() for the block-scaled ones.
void dequantize_per_tensor(const GemmProblem& problem, const BlockScaledInputs& inputs, float* a,
                           float* b, cudaStream_t stream);

}  // namespace gemm
