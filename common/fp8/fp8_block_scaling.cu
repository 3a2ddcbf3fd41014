#include "common/fp8/fp8_block_scaling.hpp"

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
  const int64_t k_blocks = (k + kBlock - 1) / kBlock;
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

// The largest magnitude of the values a block's threads hold, reduced over the thread block.
__device__ float block_amax(float amax) {
  __shared__ float warp_amax[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2)
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffff, amax, offset));
  if (threadIdx.x % 32 == 0) warp_amax[threadIdx.x / 32] = amax;
  __syncthreads();
  amax = 0.0f;
  for (int w = 0; w < kThreads / 32; ++w) amax = fmaxf(amax, warp_amax[w]);
  __syncthreads();  // warp_amax may be written again by the next call
  return amax;
}

__device__ float scale_for(float amax) { return amax > 0.0f ? amax / kE4m3Max : 1.0f; }

// Rounds value / scale to the nearest e4m3, saturating at +-448.
__device__ e4m3 quantized(float value, float scale) {
  e4m3 result;
  result.__x = __nv_cvt_float_to_fp8(value / scale, __NV_SATFINITE, __NV_E4M3);
  return result;
}

// One thread block per block of `block_rows` x 128 values (rows and K clipped to the matrix): its
// amax, its scale, then its values. scale_index(row block, k block) says where the scale goes.
template <class ScaleIndex>
__global__ void quantize_blocks_kernel(const bf16* matrix, int64_t rows, int64_t k, int block_rows,
                                       e4m3* values, float* scales, ScaleIndex scale_index) {
  const int64_t k_blocks = (k + kBlock - 1) / kBlock;
  const int64_t row_block = blockIdx.x / k_blocks, k_block = blockIdx.x % k_blocks;
  const int64_t first_row = row_block * block_rows, first_k = k_block * kBlock;
  const int64_t last_row = min(rows, first_row + block_rows), last_k = min(k, first_k + kBlock);
  const int64_t width = last_k - first_k, count = (last_row - first_row) * width;
  float amax = 0.0f;
  for (int64_t i = threadIdx.x; i < count; i += kThreads)
    amax = fmaxf(amax, fabsf(__bfloat162float(matrix[(first_row + i / width) * k + first_k + i % width])));
  const float scale = scale_for(block_amax(amax));
  for (int64_t i = threadIdx.x; i < count; i += kThreads) {
    const int64_t at = (first_row + i / width) * k + first_k + i % width;
    values[at] = quantized(__bfloat162float(matrix[at]), scale);
  }
  if (threadIdx.x == 0) scales[scale_index(row_block, k_block)] = scale;
}

// A's scales: the row of K block kb holds one per row of A (BlockScaledOperands::a_scales).
struct AScaleIndex {
  int64_t scale_rows;
  __device__ int64_t operator()(int64_t row, int64_t k_block) const {
    return k_block * scale_rows + row;
  }
};
// B's scales: the row of block row nb holds one per K block (BlockScaledOperands::b_scales).
struct BScaleIndex {
  int64_t stride;
  __device__ int64_t operator()(int64_t row_block, int64_t k_block) const {
    return row_block * stride + k_block;
  }
};

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
  const float scale = scale_for(__uint_as_float(*reinterpret_cast<unsigned int*>(scale_in_out)));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    values[i] = quantized(__bfloat162float(matrix[i]), scale);
}

__global__ void finish_scale_kernel(float* scale_in_out) {
  *scale_in_out = scale_for(__uint_as_float(*reinterpret_cast<unsigned int*>(scale_in_out)));
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
  const int64_t blocks = m * BlockScaledOperands::k_blocks(k);
  quantize_blocks_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(
      a, m, k, 1, values, scales, AScaleIndex{BlockScaledOperands::scale_rows(m)});
  CUDA_CHECK(cudaGetLastError());
}

void quantize_128x128(const bf16* b, int64_t n, int64_t k, e4m3* values, float* scales,
                      cudaStream_t stream) {
  const int64_t row_blocks = ceil_div<int64_t>(n, kBlock);
  const int64_t stride = BlockScaledOperands::b_scale_stride(k);
  CUDA_CHECK(cudaMemsetAsync(scales, 0, row_blocks * stride * sizeof(float), stream));
  quantize_blocks_kernel<<<unsigned(row_blocks * BlockScaledOperands::k_blocks(k)), kThreads, 0,
                           stream>>>(b, n, k, kBlock, values, scales, BScaleIndex{stride});
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
