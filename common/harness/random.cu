#include "common/harness/random.hpp"

#include <algorithm>

#include <curand.h>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"

namespace gemm {
namespace {

// cuRAND gives floats in (0, 1]; map them to (-1, 1] and round to bf16.
__global__ void uniform_to_bf16(const float* uniform, bf16* out, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16(2.0f * uniform[i] - 1.0f);
}

}  // namespace

void fill_uniform(bf16* data, size_t count, uint64_t seed, cudaStream_t stream) {
  curandGenerator_t generator;
  CUDA_CHECK(curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  CUDA_CHECK(curandSetStream(generator, stream));
  CUDA_CHECK(curandSetPseudoRandomGeneratorSeed(generator, seed));

  // Generate in chunks so a large matrix needs no second copy of itself in fp32.
  const size_t chunk = std::min<size_t>(count, size_t(1) << 24);
  DeviceBuffer<float> uniform(chunk);
  for (size_t done = 0; done < count; done += chunk) {
    const size_t this_chunk = std::min(chunk, count - done);
    CUDA_CHECK(curandGenerateUniform(generator, uniform.get(), this_chunk));
    uniform_to_bf16<<<1024, 256, 0, stream>>>(uniform.get(), data + done, this_chunk);
    CUDA_CHECK(cudaGetLastError());
  }
  // The chunk buffer is freed when this function returns: finish using it first.
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(curandDestroyGenerator(generator));
}

}  // namespace gemm
