#pragma once
// cuBLASLt's fp8 matrix multiplication, the reference lesson 18 is timed against: the same e4m3
// operands and scales (common/fp8/fp8_block_scaling.hpp), bf16 output, fp32 accumulation.
//   - block-scaled: cuBLASLt's A is our B with BLK128x128_32F scales, its B our A with
//     VEC128_32F scales (cuBLAS 12.9 and later, Hopper only); the bytes of our scales are the
//     layouts it reads. It needs M % 4 == 0 (and has no fast accumulation);
//   - per-tensor: one scale per operand (the per-tensor copies), the plain fp8 GEMM, its sums
//     promoted to fp32 now and then (fast accumulation off, as for the block-scaled one);
//   - per-tensor with fast accumulation: the same, summed by the tensor cores alone over all of K
//     (lesson 18's `accuracy`: what the promotion buys).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "common/device_buffer.hpp"
#include "common/fp8/fp8_block_scaling.hpp"
#include "common/gemm.hpp"

namespace gemm {

enum class Fp8Scaling { block, per_tensor, per_tensor_fast_accumulation };

class Fp8Reference {
 public:
  Fp8Reference();
  ~Fp8Reference();
  Fp8Reference(const Fp8Reference&) = delete;
  Fp8Reference& operator=(const Fp8Reference&) = delete;

  // Whether cuBLASLt's block-scaled fp8 takes the problem: it needs M % 4 == 0.
  static bool block_scaling_takes(const GemmProblem& problem) { return problem.m % 4 == 0; }
  // "cuBLASLt fp8 with 1x128 / 128x128 block scales", "... with per-tensor scales" or "... with
  // per-tensor scales and fast accumulation" (no comma: it goes into CSV files).
  static std::string describe(Fp8Scaling scaling);

  // D (M x N, bf16, row-major) = the product of the inputs' operands with `scaling`, on `stream`;
  // does not wait. The first call for a shape asks cuBLASLt for an algorithm. Throws CudaError
  // if cuBLASLt has none (block scaling on another GPU than Hopper, or M % 4 != 0).
  void run(const GemmProblem& problem, Fp8Scaling scaling, const BlockScaledInputs& inputs,
           bf16* d, cudaStream_t stream);

 private:
  struct Plan;
  using Key = std::tuple<int64_t, int64_t, int64_t, Fp8Scaling>;
  Plan& plan_for(const Key& key, const void* a_scales, const void* b_scales);

  static constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // cuBLAS's advice for Hopper
  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer<unsigned char> workspace_;
  std::map<Key, std::unique_ptr<Plan>> plans_;
};

}  // namespace gemm
