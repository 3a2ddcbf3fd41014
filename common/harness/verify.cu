#include "common/harness/verify.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"

namespace gemm {
namespace {

constexpr int kBlocks = 1024;
constexpr int kThreads = 256;

__global__ void poison_kernel(uint16_t* data, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    data[i] = kPoisonBits;
}

// Totals the kernels below accumulate with atomics. The maxima are non-negative doubles stored
// as their bit patterns: for non-negative IEEE doubles, the order of the bit patterns read as
// unsigned integers is the order of the values, so atomicMax on the bits is a max on the values.
struct Totals {
  unsigned long long mismatches, nan_or_inf, unwritten, guard_overwritten;
  unsigned long long max_normalized_bits, max_abs_bits, first_mismatch;
  double sum_squares;
};

__device__ double warp_sum(double value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffff, value, offset);
  return value;
}
__device__ unsigned long long warp_sum(unsigned long long value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffff, value, offset);
  return value;
}
__device__ unsigned long long warp_max(unsigned long long value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = max(value, __shfl_xor_sync(0xffffffff, value, offset));
  return value;
}
__device__ unsigned long long warp_min(unsigned long long value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = min(value, __shfl_xor_sync(0xffffffff, value, offset));
  return value;
}

// Pass 1: the sum of squares of the reference, for rms(ref).
__global__ void sum_squares_kernel(const float* reference, int64_t count, Totals* totals) {
  double sum = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    sum += double(reference[i]) * double(reference[i]);
  sum = warp_sum(sum);
  if (threadIdx.x % 32 == 0) atomicAdd(&totals->sum_squares, sum);
}

// Pass 2: every element against the rule, plus the guard zone.
__global__ void compare_kernel(const uint16_t* d_bits, const float* reference, int64_t count,
                               const uint16_t* guard_bits, int64_t guard_count,
                               double reference_rms, ExtraAllowance extra, Totals* totals) {
  unsigned long long mismatches = 0, nan_or_inf = 0, unwritten = 0, guard_overwritten = 0;
  unsigned long long first_mismatch = ~0ull;
  double max_normalized = 0, max_abs = 0;

  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const uint16_t bits = d_bits[i];
    const double got = double(__bfloat162float(__ushort_as_bfloat16(bits)));
    const double expected = double(reference[i]);
    double allowed = allowed_error(expected, reference_rms);
    if (extra.magnitude != nullptr) allowed += extra.per_unit * double(extra.magnitude[i]);
    const double normalized = normalized_error_within(got, expected, allowed);
    max_normalized = fmax(max_normalized, normalized);
    if (normalized != INFINITY) max_abs = fmax(max_abs, fabs(got - expected));
    if (!(normalized <= 1.0)) {
      ++mismatches;
      if (bits == kPoisonBits) ++unwritten;
      else if (normalized == INFINITY && !(fabs(got) <= DBL_MAX)) ++nan_or_inf;
      first_mismatch = min(first_mismatch, (unsigned long long)i);
    }
  }
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < guard_count;
       i += int64_t(gridDim.x) * blockDim.x)
    if (guard_bits[i] != kPoisonBits) ++guard_overwritten;

  mismatches = warp_sum(mismatches);
  nan_or_inf = warp_sum(nan_or_inf);
  unwritten = warp_sum(unwritten);
  guard_overwritten = warp_sum(guard_overwritten);
  first_mismatch = warp_min(first_mismatch);
  const unsigned long long max_normalized_bits = warp_max(__double_as_longlong(max_normalized));
  const unsigned long long max_abs_bits = warp_max(__double_as_longlong(max_abs));
  if (threadIdx.x % 32 == 0) {
    if (mismatches) atomicAdd(&totals->mismatches, mismatches);
    if (nan_or_inf) atomicAdd(&totals->nan_or_inf, nan_or_inf);
    if (unwritten) atomicAdd(&totals->unwritten, unwritten);
    if (guard_overwritten) atomicAdd(&totals->guard_overwritten, guard_overwritten);
    atomicMin(&totals->first_mismatch, first_mismatch);
    atomicMax(&totals->max_normalized_bits, max_normalized_bits);
    atomicMax(&totals->max_abs_bits, max_abs_bits);
  }
}

__global__ void squared_error_kernel(const bf16* d, const float* reference, int64_t count,
                                     double* sums) {
  double error = 0, magnitude = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const double difference = double(__bfloat162float(d[i])) - double(reference[i]);
    error += difference * difference;
    magnitude += double(reference[i]) * double(reference[i]);
  }
  error = warp_sum(error);
  magnitude = warp_sum(magnitude);
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&sums[0], error);
    atomicAdd(&sums[1], magnitude);
  }
}

double bits_to_double(unsigned long long bits) {
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

}  // namespace

double relative_rms_error(const bf16* d, const float* reference, int64_t count,
                          cudaStream_t stream) {
  DeviceBuffer<double> sums(2);
  CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, sums.bytes(), stream));
  squared_error_kernel<<<kBlocks, kThreads, 0, stream>>>(d, reference, count, sums.get());
  CUDA_CHECK(cudaGetLastError());
  double host[2];
  CUDA_CHECK(cudaMemcpyAsync(host, sums.get(), sizeof(host), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return host[1] > 0 ? std::sqrt(host[0] / host[1]) : 0.0;
}

void poison(bf16* data, size_t count, cudaStream_t stream) {
  poison_kernel<<<kBlocks, kThreads, 0, stream>>>(reinterpret_cast<uint16_t*>(data), count);
  CUDA_CHECK(cudaGetLastError());
}

VerifyReport verify_on_device(const bf16* d, const float* reference, int64_t count,
                              const bf16* guard, int64_t guard_count, cudaStream_t stream,
                              const ExtraAllowance& extra) {
  DeviceBuffer<Totals> totals(1);
  Totals initial{};
  initial.first_mismatch = ~0ull;
  CUDA_CHECK(cudaMemcpyAsync(totals.get(), &initial, sizeof(Totals), cudaMemcpyHostToDevice, stream));

  sum_squares_kernel<<<kBlocks, kThreads, 0, stream>>>(reference, count, totals.get());
  CUDA_CHECK(cudaGetLastError());
  Totals host{};
  CUDA_CHECK(cudaMemcpyAsync(&host, totals.get(), sizeof(Totals), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const double reference_rms = count > 0 ? std::sqrt(host.sum_squares / double(count)) : 0.0;

  compare_kernel<<<kBlocks, kThreads, 0, stream>>>(
      reinterpret_cast<const uint16_t*>(d), reference, count,
      reinterpret_cast<const uint16_t*>(guard), guard_count, reference_rms, extra, totals.get());
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpyAsync(&host, totals.get(), sizeof(Totals), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));

  VerifyReport report;
  report.elements = count;
  report.mismatches = int64_t(host.mismatches);
  report.nan_or_inf = int64_t(host.nan_or_inf);
  report.unwritten = int64_t(host.unwritten);
  report.guard_overwritten = int64_t(host.guard_overwritten);
  report.max_normalized_error = bits_to_double(host.max_normalized_bits);
  report.max_abs_error = bits_to_double(host.max_abs_bits);
  report.reference_rms = reference_rms;
  if (host.mismatches > 0) {
    report.first_mismatch = int64_t(host.first_mismatch);
    bf16 got;
    float expected;
    CUDA_CHECK(cudaMemcpy(&got, d + report.first_mismatch, sizeof(got), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&expected, reference + report.first_mismatch, sizeof(expected),
                          cudaMemcpyDeviceToHost));
    report.first_mismatch_got = double(__bfloat162float(got));
    report.first_mismatch_expected = double(expected);
  }
  return report;
}

VerifyReport verify_on_host(const std::vector<bf16>& d, const std::vector<double>& reference,
                            const std::vector<double>& magnitude, double per_unit) {
  VerifyReport report;
  report.elements = int64_t(d.size());
  double sum_squares = 0;
  for (double value : reference) sum_squares += value * value;
  report.reference_rms = reference.empty() ? 0.0 : std::sqrt(sum_squares / double(reference.size()));

  for (size_t i = 0; i < d.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, &d[i], sizeof(bits));
    const double got = double(__bfloat162float(d[i]));
    double allowed = allowed_error(reference[i], report.reference_rms);
    if (!magnitude.empty()) allowed += per_unit * magnitude[i];
    const double normalized = normalized_error_within(got, reference[i], allowed);
    report.max_normalized_error = std::max(report.max_normalized_error, normalized);
    if (normalized != INFINITY)
      report.max_abs_error = std::max(report.max_abs_error, std::fabs(got - reference[i]));
    if (!(normalized <= 1.0)) {
      ++report.mismatches;
      if (bits == kPoisonBits) ++report.unwritten;
      else if (!(std::fabs(got) <= DBL_MAX)) ++report.nan_or_inf;
      if (report.first_mismatch < 0) {
        report.first_mismatch = int64_t(i);
        report.first_mismatch_got = got;
        report.first_mismatch_expected = reference[i];
      }
    }
  }
  return report;
}

std::string VerifyReport::summary(int64_t columns) const {
  char line[512];
  int length = std::snprintf(line, sizeof(line),
                             "max normalized error %.3g (pass <= 1), %lld of %lld mismatched",
                             max_normalized_error, (long long)mismatches, (long long)elements);
  if (mismatches > 0 && length < int(sizeof(line)))
    length += std::snprintf(line + length, sizeof(line) - length,
                            " (%lld NaN/Inf, %lld unwritten; first at row %lld col %lld: got %.6g, "
                            "expected %.6g)",
                            (long long)nan_or_inf, (long long)unwritten,
                            (long long)(first_mismatch / columns), (long long)(first_mismatch % columns),
                            first_mismatch_got, first_mismatch_expected);
  if (guard_overwritten > 0 && length < int(sizeof(line)))
    std::snprintf(line + length, sizeof(line) - length,
                  ", %lld elements written past the end of D", (long long)guard_overwritten);
  return line;
}

}  // namespace gemm
