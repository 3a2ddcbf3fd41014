#include "common/fp8/fp8_block_scaling.hpp"

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "common/cuda_check.hpp"

namespace gemm {
namespace {

constexpr int kBlock = BlockScaledOperands::kBlock;
constexpr int kThreads = 256;

// splitmix64: a well-mixed 64-bit hash, for the blocks' magnitudes.
__device__ uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void spread_kernel(bf16* matrix, int64_t rows, int64_t k, int block_rows,
                              uint64_t seed) {
  const int64_t k_blocks = BlockScaledOperands::k_blocks(k);
  const int64_t count = rows * k;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t block = (i / k) / block_rows * k_blocks + (i % k) / kBlock;
    const int exponent =
        int(mix(seed ^ mix(uint64_t(block))) % (2 * kBlockMagnitudeOctaves + 1)) -
        kBlockMagnitudeOctaves;
    matrix[i] = __float2bfloat16(ldexpf(__bfloat162float(matrix[i]), exponent));
  }
}

// The largest magnitude of the values a warp's lanes hold, in every lane.
__device__ float warp_amax(float amax) {
  for (int offset = 16; offset > 0; offset /= 2)
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffff, amax, offset));
  return amax;
}

// The largest magnitude of the values a block's threads hold, reduced over the thread block.
__device__ float block_amax(float amax) {
  __shared__ float warps_amax[kThreads / 32];
  amax = warp_amax(amax);
  if (threadIdx.x % 32 == 0) warps_amax[threadIdx.x / 32] = amax;
  __syncthreads();
  amax = 0.0f;
  for (int w = 0; w < kThreads / 32; ++w) amax = fmaxf(amax, warps_amax[w]);
  __syncthreads();  // warps_amax may be written again by the next call
  return amax;
}

// The two quantizers read each value once and move it in wide accesses: a block's values stay in
// registers from the load that finds the block's amax to the store of their e4m3. A ragged K ends
// in a block shorter by a multiple of 16 values (the contract's K % 16 == 0), so every group of 4
// or 8 values a thread loads is wholly inside K or wholly outside it.

// The e4m3 of four values, packed in the order they lie in memory (the first in the low byte).
__device__ uint32_t quantized_four(const float (&x)[4], float scale) {
  const float inverse_scale = e4m3_inverse_scale(scale);
  uint32_t packed = 0;
  for (int i = 0; i < 4; ++i) packed |= uint32_t(e4m3_bits(x[i], inverse_scale)) << (8 * i);
  return packed;
}

// The four bf16 of an 8-byte word, as floats, the first from the low half.
__device__ void unpack_four(const uint2& word, float (&x)[4]) {
  const __nv_bfloat162 low = *reinterpret_cast<const __nv_bfloat162*>(&word.x);
  const __nv_bfloat162 high = *reinterpret_cast<const __nv_bfloat162*>(&word.y);
  x[0] = __low2float(low);
  x[1] = __high2float(low);
  x[2] = __low2float(high);
  x[3] = __high2float(high);
}

// A in blocks of 1 x 128: one warp per block, 4 values per lane (one 8-byte load), the amax
// reduced across the warp, then 4 e4m3 per lane (one 4-byte store). The scale goes where
// BlockScaledOperands::a_scales puts it: row `row` of K block k_block's row of scale_rows.
__global__ void quantize_1x128_kernel(const bf16* a, int64_t m, int64_t k, e4m3* values,
                                      float* scales, int64_t scale_rows) {
  constexpr int kPerLane = kBlock / 32;
  const int64_t k_blocks = BlockScaledOperands::k_blocks(k);
  const int64_t block = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (block >= m * k_blocks) return;  // whole warps: every lane of a warp has the same block
  const int lane = threadIdx.x % 32;
  const int64_t row = block / k_blocks, k_block = block % k_blocks;
  const int64_t column = k_block * kBlock + lane * kPerLane;
  const bool inside = column < k;
  float x[kPerLane] = {};
  if (inside) unpack_four(*reinterpret_cast<const uint2*>(a + row * k + column), x);
  float amax = 0.0f;
  for (float value : x) amax = fmaxf(amax, fabsf(value));
  const float scale = e4m3_scale_for(warp_amax(amax));
  if (inside) *reinterpret_cast<uint32_t*>(values + row * k + column) = quantized_four(x, scale);
  if (lane == 0) scales[k_block * scale_rows + row] = scale;
}

// B in blocks of 128 x 128: one thread block of kThreads per block; each thread holds 64 of its
// values as 8 loads of 8 (16 bytes each: a row of the block is 16 of them), the amax is reduced
// over the thread block, then each thread stores its values' e4m3, 8 bytes at a time. The scale
// goes where BlockScaledOperands::b_scales puts it.
__global__ void quantize_128x128_kernel(const bf16* b, int64_t n, int64_t k, e4m3* values,
                                        float* scales, int64_t scale_stride) {
  constexpr int kPerLoad = 8, kLoadsPerRow = kBlock / kPerLoad;
  constexpr int kLoads = kBlock * kLoadsPerRow / kThreads;
  const int64_t k_blocks = BlockScaledOperands::k_blocks(k);
  const int64_t row_block = blockIdx.x / k_blocks, k_block = blockIdx.x % k_blocks;
  uint4 words[kLoads];
  int64_t at[kLoads];  // where each load's first value lies in b and in values; -1: outside B
  float amax = 0.0f;
  for (int i = 0; i < kLoads; ++i) {
    const int load = threadIdx.x + i * kThreads;
    const int64_t row = row_block * kBlock + load / kLoadsPerRow;
    const int64_t column = k_block * kBlock + (load % kLoadsPerRow) * kPerLoad;
    at[i] = row < n && column < k ? row * k + column : -1;
    words[i] = at[i] >= 0 ? *reinterpret_cast<const uint4*>(b + at[i]) : uint4{};
    float x[4];
    unpack_four(uint2{words[i].x, words[i].y}, x);
    for (float value : x) amax = fmaxf(amax, fabsf(value));
    unpack_four(uint2{words[i].z, words[i].w}, x);
    for (float value : x) amax = fmaxf(amax, fabsf(value));
  }
  const float scale = e4m3_scale_for(block_amax(amax));
  for (int i = 0; i < kLoads; ++i) {
    if (at[i] < 0) continue;
    float low[4], high[4];
    unpack_four(uint2{words[i].x, words[i].y}, low);
    unpack_four(uint2{words[i].z, words[i].w}, high);
    *reinterpret_cast<uint2*>(values + at[i]) =
        uint2{quantized_four(low, scale), quantized_four(high, scale)};
  }
  if (threadIdx.x == 0) scales[row_block * scale_stride + k_block] = scale;
}

__global__ void amax_kernel(const bf16* matrix, int64_t count, unsigned int* amax_bits) {
  float amax = 0.0f;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    amax = fmaxf(amax, fabsf(__bfloat162float(matrix[i])));
  amax = block_amax(amax);
  // Non-negative floats order as their bit patterns do: atomicMax on the bits is a max.
  if (threadIdx.x == 0) atomicMax(amax_bits, __float_as_uint(amax));
}

__global__ void per_tensor_kernel(const bf16* matrix, int64_t count, e4m3* values,
                                  float* scale_in_out) {
  const float scale =
      e4m3_scale_for(__uint_as_float(*reinterpret_cast<unsigned int*>(scale_in_out)));
  const float inverse_scale = e4m3_inverse_scale(scale);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    values[i].__x = e4m3_bits(__bfloat162float(matrix[i]), inverse_scale);
}

__global__ void finish_scale_kernel(float* scale_in_out) {
  *scale_in_out = e4m3_scale_for(__uint_as_float(*reinterpret_cast<unsigned int*>(scale_in_out)));
}

__global__ void dequantize_kernel(const e4m3* values, int64_t rows, int64_t k, int block_rows,
                                  const float* scales, int64_t row_stride, int64_t k_block_stride,
                                  float* out) {
  const int64_t count = rows * k;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / k, k_block = (i % k) / kBlock;
    const float scale = scales[(row / block_rows) * row_stride + k_block * k_block_stride];
    out[i] = float(values[i]) * scale;
  }
}

__global__ void absolute_kernel(float* values, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    values[i] = fabsf(values[i]);
}

constexpr int kGrid = 1024;

}  // namespace

void spread_block_magnitudes(bf16* matrix, int64_t rows, int64_t k, int block_rows, uint64_t seed,
                             cudaStream_t stream) {
  spread_kernel<<<kGrid, kThreads, 0, stream>>>(matrix, rows, k, block_rows, seed);
  CUDA_CHECK(cudaGetLastError());
}

void quantize_1x128(const bf16* a, int64_t m, int64_t k, e4m3* values, float* scales,
                    cudaStream_t stream) {
  const int64_t scale_count = BlockScaledOperands::k_blocks(k) * BlockScaledOperands::scale_rows(m);
  CUDA_CHECK(cudaMemsetAsync(scales, 0, scale_count * sizeof(float), stream));  // the padding
  const int64_t warps = m * BlockScaledOperands::k_blocks(k);
  quantize_1x128_kernel<<<unsigned(ceil_div<int64_t>(warps, kThreads / 32)), kThreads, 0,
                          stream>>>(a, m, k, values, scales, BlockScaledOperands::scale_rows(m));
  CUDA_CHECK(cudaGetLastError());
}

void quantize_128x128(const bf16* b, int64_t n, int64_t k, e4m3* values, float* scales,
                      cudaStream_t stream) {
  const int64_t row_blocks = ceil_div<int64_t>(n, kBlock);
  const int64_t stride = BlockScaledOperands::b_scale_stride(k);
  CUDA_CHECK(cudaMemsetAsync(scales, 0, row_blocks * stride * sizeof(float), stream));
  quantize_128x128_kernel<<<unsigned(row_blocks * BlockScaledOperands::k_blocks(k)), kThreads, 0,
                            stream>>>(b, n, k, values, scales, stride);
  CUDA_CHECK(cudaGetLastError());
}

void quantize_per_tensor(const bf16* matrix, int64_t count, e4m3* values, float* scale,
                         cudaStream_t stream) {
  // The amax first (as bits, in the scale's own float), then the scale and the values.
  CUDA_CHECK(cudaMemsetAsync(scale, 0, sizeof(float), stream));
  amax_kernel<<<kGrid, kThreads, 0, stream>>>(matrix, count, reinterpret_cast<unsigned int*>(scale));
  CUDA_CHECK(cudaGetLastError());
  per_tensor_kernel<<<kGrid, kThreads, 0, stream>>>(matrix, count, values, scale);
  CUDA_CHECK(cudaGetLastError());
  finish_scale_kernel<<<1, 1, 0, stream>>>(scale);
  CUDA_CHECK(cudaGetLastError());
}

void dequantize(const GemmProblem& problem, const BlockScaledOperands& operands, float* a,
                float* b, cudaStream_t stream) {
  dequantize_kernel<<<kGrid, kThreads, 0, stream>>>(operands.a, problem.m, problem.k, 1,
                                                    operands.a_scales, 1,
                                                    BlockScaledOperands::scale_rows(problem.m), a);
  CUDA_CHECK(cudaGetLastError());
  dequantize_kernel<<<kGrid, kThreads, 0, stream>>>(
      operands.b, problem.n, problem.k, kBlock, operands.b_scales,
      BlockScaledOperands::b_scale_stride(problem.k), 1, b);
  CUDA_CHECK(cudaGetLastError());
}

void dequantize_per_tensor(const GemmProblem& problem, const BlockScaledInputs& inputs, float* a,
                           float* b, cudaStream_t stream) {
  // One scale for every value: strides of 0 through the scales.
  dequantize_kernel<<<kGrid, kThreads, 0, stream>>>(inputs.per_tensor_a(), problem.m, problem.k, 1,
                                                    inputs.per_tensor_a_scale(), 0, 0, a);
  CUDA_CHECK(cudaGetLastError());
  dequantize_kernel<<<kGrid, kThreads, 0, stream>>>(inputs.per_tensor_b(), problem.n, problem.k, 1,
                                                    inputs.per_tensor_b_scale(), 0, 0, b);
  CUDA_CHECK(cudaGetLastError());
}

void absolute_values(float* values, int64_t count, cudaStream_t stream) {
  absolute_kernel<<<kGrid, kThreads, 0, stream>>>(values, count);
  CUDA_CHECK(cudaGetLastError());
}

void BlockScaledInputs::quantize(const GemmProblem& problem, const bf16* a, const bf16* b,
                                 cudaStream_t stream) {
  const int64_t k_blocks = BlockScaledOperands::k_blocks(problem.k);
  a_.resize(size_t(problem.m * problem.k));
  b_.resize(size_t(problem.n * problem.k));
  a_scales_.resize(size_t(k_blocks * BlockScaledOperands::scale_rows(problem.m)));
  b_scales_.resize(size_t(ceil_div<int64_t>(problem.n, kBlock) *
                          BlockScaledOperands::b_scale_stride(problem.k)));
  quantize_blocks(problem, a, b, stream);
  per_tensor_a_.resize(a_.size());
  per_tensor_b_.resize(b_.size());
  per_tensor_scales_.resize(2 * kScaleSpacing);
  quantize_per_tensor(a, int64_t(a_.size()), per_tensor_a_.get(),
                      const_cast<float*>(per_tensor_a_scale()), stream);
  quantize_per_tensor(b, int64_t(b_.size()), per_tensor_b_.get(),
                      const_cast<float*>(per_tensor_b_scale()), stream);
}

void BlockScaledInputs::quantize_blocks(const GemmProblem& problem, const bf16* a, const bf16* b,
                                        cudaStream_t stream) {
  quantize_1x128(a, problem.m, problem.k, a_.get(), a_scales_.get(), stream);
  quantize_128x128(b, problem.n, problem.k, b_.get(), b_scales_.get(), stream);
}

BlockScaledOperands BlockScaledInputs::operands() const {
  BlockScaledOperands operands;
  operands.a = a_.get();
  operands.b = b_.get();
  operands.a_scales = a_scales_.get();
  operands.b_scales = b_scales_.get();
  return operands;
}

}  // namespace gemm
