#pragma once
// How lesson 19 checks Y_r: against a one-GPU reference of the whole layer, computed on this
// rank from the same inputs, with the course's rule plus what rounding each rank's partial sum
// to bf16 may add (plan.hpp: allowed_error_across_ranks; README, "How it is checked").
//
// The reference adds, for the rows of rank r's shard, the G partial products of the tensor-
// parallel split, each computed by cuBLAS with an fp32 output:
//
//   ref       = sum_q  gelu(X_r W1_q^T + b1_q) W2_q^T     (H_q from cuBLASLt, rounded to bf16
//   magnitude = sum_q |gelu(X_r W1_q^T + b1_q) W2_q^T|     as the layer stores H)
//
// ref is the one-GPU layer (the split of d_ff changes only the order of the fp32 sum), and
// magnitude is what the allowance for the partials' roundings needs.

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/gemm.hpp"
#include "common/verify.hpp"
#include "lessons/19_tensor_parallel/plan.hpp"

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

// What the comparison kernels add up with atomics. The maxima are non-negative doubles kept as
// their bit patterns: for those, the order of the patterns read as integers is the order of the
// values, so an atomicMax on the bits is a max on the values.
struct CheckTotals {
  unsigned long long mismatches, nan_or_inf, unwritten, first_mismatch;
  unsigned long long max_normalized_bits, max_abs_bits;
  double sum_squares;
};

__global__ void reference_sum_squares_kernel(const float* reference, int64_t count,
                                             CheckTotals* totals) {
  double sum = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    sum += double(reference[i]) * double(reference[i]);
  atomicAdd(&totals->sum_squares, sum);
}

// Every element of Y against allowed_error_across_ranks. NaN, Inf and the poison never pass. Each
// thread keeps its own totals and adds them to the others' once, at the end.
__global__ void compare_across_ranks_kernel(const uint16_t* y_bits, const float* reference,
                                            const float* magnitude, int64_t count,
                                            double reference_rms, int roundings,
                                            CheckTotals* totals) {
  unsigned long long mismatches = 0, nan_or_inf = 0, unwritten = 0, first_mismatch = ~0ull;
  double max_normalized = 0, max_abs = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const double got = double(__bfloat162float(__ushort_as_bfloat16(y_bits[i])));
    const double expected = double(reference[i]);
    const double allowed =
        allowed_error_across_ranks(expected, reference_rms, double(magnitude[i]), roundings);
    const bool finite = fabs(got) <= DBL_MAX;
    const double error = fabs(got - expected);
    double normalized = INFINITY;
    if (finite && allowed > 0) normalized = error / allowed;
    else if (finite && error == 0) normalized = 0;
    max_normalized = fmax(max_normalized, normalized);
    if (finite) max_abs = fmax(max_abs, error);
    if (!(normalized <= 1.0)) {
      ++mismatches;
      if (y_bits[i] == gemm::kPoisonBits) ++unwritten;
      else if (!finite) ++nan_or_inf;
      first_mismatch = min(first_mismatch, (unsigned long long)i);
    }
  }
  if (mismatches > 0) {
    atomicAdd(&totals->mismatches, mismatches);
    atomicAdd(&totals->nan_or_inf, nan_or_inf);
    atomicAdd(&totals->unwritten, unwritten);
    atomicMin(&totals->first_mismatch, first_mismatch);
  }
  atomicMax(&totals->max_normalized_bits, (unsigned long long)__double_as_longlong(max_normalized));
  atomicMax(&totals->max_abs_bits, (unsigned long long)__double_as_longlong(max_abs));
}

inline double double_from_bits(unsigned long long bits) {
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Compares Y (count bf16 values) with the reference; `roundings` as partial_roundings(). Waits.
inline gemm::VerifyReport compare_across_ranks(const gemm::bf16* y, const float* reference,
                                               const float* magnitude, int64_t count,
                                               int roundings, cudaStream_t stream) {
  gemm::DeviceBuffer<CheckTotals> totals(1);
  CheckTotals host{};
  host.first_mismatch = ~0ull;
  CUDA_CHECK(cudaMemcpyAsync(totals.get(), &host, sizeof(host), cudaMemcpyHostToDevice, stream));
  reference_sum_squares_kernel<<<1024, 256, 0, stream>>>(reference, count, totals.get());
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpyAsync(&host, totals.get(), sizeof(host), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const double reference_rms = count > 0 ? std::sqrt(host.sum_squares / double(count)) : 0.0;

  compare_across_ranks_kernel<<<1024, 256, 0, stream>>>(reinterpret_cast<const uint16_t*>(y),
                                                        reference, magnitude, count,
                                                        reference_rms, roundings, totals.get());
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpyAsync(&host, totals.get(), sizeof(host), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));

  gemm::VerifyReport report;
  report.elements = count;
  report.mismatches = int64_t(host.mismatches);
  report.nan_or_inf = int64_t(host.nan_or_inf);
  report.unwritten = int64_t(host.unwritten);
  report.max_normalized_error = double_from_bits(host.max_normalized_bits);
  report.max_abs_error = double_from_bits(host.max_abs_bits);
  report.reference_rms = reference_rms;
  if (host.mismatches > 0) {
    report.first_mismatch = int64_t(host.first_mismatch);
    gemm::bf16 got;
    float expected;
    CUDA_CHECK(cudaMemcpy(&got, y + report.first_mismatch, sizeof(got), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&expected, reference + report.first_mismatch, sizeof(expected),
                          cudaMemcpyDeviceToHost));
    report.first_mismatch_got = double(__bfloat162float(got));
    report.first_mismatch_expected = double(expected);
  }
  return report;
}

}  // namespace lesson19
