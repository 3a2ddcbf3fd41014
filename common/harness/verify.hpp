#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/gemm.hpp"
#include "common/host_device.hpp"

namespace gemm {

// ---- The pass rule ---------------------------------------------------------------------------
//
// An element passes if |d - ref| <= 2^-7 * |ref| + 2^-7 * rms(ref).
//
// Why these two terms: D is rounded to bf16, whose 8-bit significand has a relative rounding
// error of at most 2^-8 (half a unit in the last place, just above a power of two); accumulating
// K products in fp32 in a different order than the reference adds a little more. 2^-7 * |ref|
// leaves twice the headroom of bf16 rounding. Elements whose true
// value is near zero (sums of +/- products that cancel) cannot be held to a relative bound, so the
// second term allows an absolute error of 2^-7 of the typical magnitude of D.
// NaN and Inf never pass.
inline constexpr double kTolerance = 1.0 / 128.0;  // 2^-7

GEMM_HOST_DEVICE inline double allowed_error(double reference, double reference_rms) {
  return kTolerance * fabs(reference) + kTolerance * reference_rms;
}

// |got - reference| in units of `allowed`: <= 1 passes. +Inf for NaN or Inf.
GEMM_HOST_DEVICE inline double normalized_error_within(double got, double reference,
                                                       double allowed) {
  if (!(fabs(got) <= DBL_MAX)) return INFINITY;  // NaN or Inf (every comparison with NaN is false)
  const double error = fabs(got - reference);
  if (allowed == 0) return error == 0 ? 0 : INFINITY;
  return error / allowed;
}

// |got - reference| in units of the rule's allowed error.
GEMM_HOST_DEVICE inline double normalized_error(double got, double reference, double reference_rms) {
  return normalized_error_within(got, reference, allowed_error(reference, reference_rms));
}

// ---- Poisoned outputs -----------------------------------------------------------------------
//
// Before a lesson runs, D (and a guard zone after it) is filled with this bit pattern: a negative
// NaN that no arithmetic produces (NaN from arithmetic or conversion is the positive 0x7FFF or
// 0x7FC0). An element still holding it afterwards was never written.
inline constexpr uint16_t kPoisonBits = 0xFFFF;

void poison(bf16* data, size_t count, cudaStream_t stream);

// ---- Comparison -----------------------------------------------------------------------------

struct VerifyReport {
  int64_t elements = 0;
  int64_t mismatches = 0;   // failing elements, NaN/Inf and unwritten ones included
  int64_t nan_or_inf = 0;   // of those, how many are NaN or Inf (unwritten excluded)
  int64_t unwritten = 0;    // of those, how many still hold the poison
  int64_t guard_overwritten = 0;  // elements of the guard zone after D that were written
  double max_normalized_error = 0;  // over all elements; <= 1 passes, inf if any NaN/Inf
  double max_abs_error = 0;         // over the finite, written elements
  double reference_rms = 0;
  int64_t first_mismatch = -1;  // row-major index of the first failing element, -1 if none
  double first_mismatch_got = 0;
  double first_mismatch_expected = 0;

  bool passed() const { return mismatches == 0 && guard_overwritten == 0; }
  // One line, e.g. "max normalized error 0.27 (pass <= 1), 0 of 16777216 mismatched".
  std::string summary(int64_t columns) const;
};

// An allowance on top of the rule, element by element: per_unit * magnitude[i]. Lesson 19 checks a
// sum of partial products that were each rounded to bf16 before the sum with it (magnitude: the
// sum of the partials' absolute values). None by default: the rule alone.
struct ExtraAllowance {
  const float* magnitude = nullptr;  // `count` values on the device, or none
  double per_unit = 0;
};

// Lesson 18's allowance per unit of sum |a| |b| over K (the magnitudes of the dequantized
// operands' products), on top of the rule. The tensor cores sum fp8 products with 13 bits below
// the leading bit of the largest addend, cutting the rest (the README measures it): one wgmma of
// K = 32 adds 32 products to its accumulator, an error below 33 units of 2^-13 of the largest
// addend for the alignment and one for the result, so at most 34 * 2^-13 of the slice's sum of
// magnitudes; 4 wgmmas per 128-deep slice make 136 * 2^-13. The promotion into fp32 and the fp32
// reference add at most (K / 128 + K) * 2^-24, which kFp8SliceAllowance leaves to the caller.
inline constexpr double kFp8SliceAllowance = 136.0 / 8192.0;
GEMM_HOST_DEVICE inline double fp8_allowance_per_unit(int64_t k) {
  return kFp8SliceAllowance + double(k / 128 + 1 + k) * (1.0 / 16777216.0);
}

// sqrt(sum (d - ref)^2 / sum ref^2) over `count` elements, on the GPU.
double relative_rms_error(const bf16* d, const float* reference, int64_t count,
                          cudaStream_t stream);

// Compares D (bf16, `count` elements) with the fp32 reference on the GPU. `guard` points at
// `guard_count` poisoned elements right after D (may be 0): any of them written is reported.
VerifyReport verify_on_device(const bf16* d, const float* reference, int64_t count,
                              const bf16* guard, int64_t guard_count, cudaStream_t stream,
                              const ExtraAllowance& extra = {});

// The same rule on the CPU against an fp64 reference, for small shapes (with lesson 18's
// allowance when `magnitude` is not empty: per_unit * magnitude[i] more for element i).
VerifyReport verify_on_host(const std::vector<bf16>& d, const std::vector<double>& reference,
                            const std::vector<double>& magnitude = {}, double per_unit = 0);

}  // namespace gemm
