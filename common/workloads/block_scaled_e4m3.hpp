#pragma once
// Lesson 18's workload (common/workloads/workload.hpp): A's blocks of 1 x 128 and B's of 128 x 128
// spread over many orders of magnitude, then quantized to e4m3 with an fp32 scale per block (the
// operands GemmArgs::fp8 hands the lesson); D checked against the product of the values the
// operands stand for, with the allowance for the tensor cores' fp8 sums (kFp8SliceAllowance), and
// timed against cuBLASLt's fp8.

#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/fp8/fp8_block_scaling.hpp"
#include "common/references/fp8_reference.hpp"
#include "common/references/reference.hpp"
#include "common/workloads/workload.hpp"

namespace gemm {

class BlockScaledE4m3 final : public Workload {
 public:
  std::string describe_inputs() const override {
    return "e4m3 in with 1x128 / 128x128 fp32 scales, fp32 accumulate, bf16 out";
  }
  void make_inputs(const ProblemBuffers& buffers, cudaStream_t stream) override;
  bool reads_only_bf16_inputs() const override { return false; }
  void add_operands(GemmArgs& args) const override { args.fp8 = inputs_.operands(); }

  CheckResult verify(const ProblemBuffers& buffers, bool on_cpu, cudaStream_t stream) override;
  std::string check_reference_name(const ProblemBuffers&) const override {
    return "cuBLAS fp32 of the dequantized operands";
  }
  // cuBLASLt's block-scaled fp8 where it takes the shape, else its per-tensor fp8.
  std::string timing_reference_name(const ProblemBuffers& buffers) const override {
    return Fp8Reference::describe(reference_scaling(buffers.problem));
  }
  void run_timing_reference(const ProblemBuffers& buffers, cudaStream_t stream) override {
    run_fp8_reference(buffers, reference_scaling(buffers.problem), stream);
  }
  // cuBLASLt's per-tensor fp8 too (where the block-scaled one is the reference), and the
  // quantization of A and B from bf16.
  std::vector<Comparison> comparisons(const ProblemBuffers& buffers) override;

  // For lesson 18's own tools and tests: the operands of the last make_inputs, cuBLASLt's fp8 with
  // either scaling into D, and the quantization again (into the operands' own buffers).
  BlockScaledOperands operands() const { return inputs_.operands(); }
  const BlockScaledInputs& inputs() const { return inputs_; }
  void run_fp8_reference(const ProblemBuffers& buffers, Fp8Scaling scaling, cudaStream_t stream);
  void quantize_again(const ProblemBuffers& buffers, cudaStream_t stream);
  static Fp8Scaling reference_scaling(const GemmProblem& problem) {
    return Fp8Reference::block_scaling_takes(problem) ? Fp8Scaling::block : Fp8Scaling::per_tensor;
  }

 private:
  BlockScaledInputs inputs_;
  std::unique_ptr<Fp8Reference> fp8_reference_;  // cuBLASLt, made at the first use
  CublasGemm cublas_;
};

}  // namespace gemm
