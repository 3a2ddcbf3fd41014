#pragma once
// How lesson 19 checks Y_r: against a one-GPU reference of the whole layer, computed on this
// rank from the same inputs, with the course's rule plus what rounding each rank's partial sum
// to bf16 may add (plan.hpp: allowed_error_across_ranks; README, "How it is checked"). The
// comparison is the course's (gemm::verify_on_device with a gemm::ExtraAllowance); this file
// builds the reference and the partials' magnitudes that the allowance needs.
//
// The reference adds, for the rows of rank r's shard, the G partial products of the tensor-
// parallel split, each computed by cuBLAS with an fp32 output:
//
//   ref       = sum_q  gelu(X_r W1_q^T + b1_q) W2_q^T     (H_q from cuBLASLt, rounded to bf16
//   magnitude = sum_q |gelu(X_r W1_q^T + b1_q) W2_q^T|     as the layer stores H)
//
// ref is the one-GPU layer (the split of d_ff changes only the order of the fp32 sum), and
// magnitude is what the allowance for the partials' roundings needs.

#include <cstdint>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"

namespace lesson19 {

// reference += partial, magnitude += |partial|, element by element.
__global__ void accumulate_partial_kernel(const float* partial, int64_t count, float* reference,
                                          float* magnitude) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    reference[i] += partial[i];
    magnitude[i] += fabsf(partial[i]);
  }
}

inline void accumulate_partial(const float* partial, int64_t count, float* reference,
                               float* magnitude, cudaStream_t stream) {
  accumulate_partial_kernel<<<1024, 256, 0, stream>>>(partial, count, reference, magnitude);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson19
