// Lesson 18's workload (common/workloads/block_scaled_e4m3.hpp).
#include "common/workloads/block_scaled_e4m3.hpp"

#include <cmath>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/harness/verify.hpp"
#include "common/workloads/kinds.hpp"

namespace gemm {

void BlockScaledE4m3::make_inputs(const ProblemBuffers& buffers, cudaStream_t stream) {
  // Blocks of A (1 x 128) and B (128 x 128) far apart in magnitude, then quantized.
  const GemmProblem& p = buffers.problem;
  spread_block_magnitudes(buffers.a, p.m, p.k, 1, 4 * buffers.seed, stream);
  spread_block_magnitudes(buffers.b, p.n, p.k, BlockScaledOperands::kBlock, 4 * buffers.seed + 1,
                          stream);
  inputs_.quantize(p, buffers.a, buffers.b, stream);
}

CheckResult BlockScaledE4m3::verify(const ProblemBuffers& buffers, bool on_cpu,
                                    cudaStream_t stream) {
  // The values the operands stand for, in fp32; their product; the product of their magnitudes
  // (sum over K of |a| |b|), which the allowance for the tensor cores' fp8 sums scales with.
  const GemmProblem& p = buffers.problem;
  const int64_t elements = p.m * p.n;
  DeviceBuffer<float> a(static_cast<size_t>(p.m * p.k)), b(static_cast<size_t>(p.n * p.k));
  DeviceBuffer<float> reference(static_cast<size_t>(elements));
  DeviceBuffer<float> magnitude(static_cast<size_t>(elements));
  dequantize(p, inputs_.operands(), a.get(), b.get(), stream);
  cublas_.run_fp32_inputs(p, a.get(), b.get(), reference.get(), stream);
  std::vector<float> host_a, host_b;
  if (on_cpu) {
    host_a = download(a.get(), a.size(), stream);
    host_b = download(b.get(), b.size(), stream);
  }
  absolute_values(a.get(), int64_t(a.size()), stream);
  absolute_values(b.get(), int64_t(b.size()), stream);
  cublas_.run_fp32_inputs(p, a.get(), b.get(), magnitude.get(), stream);
  const double per_unit = fp8_allowance_per_unit(p.k);
  CheckResult result;
  result.against_cublas = verify_on_device(buffers.d, reference.get(), elements,
                                           buffers.d + elements, buffers.guard_elements, stream,
                                           ExtraAllowance{magnitude.get(), per_unit});
  if (on_cpu) {
    const std::vector<bf16> d = download(buffers.d, size_t(elements), stream);
    const std::vector<double> expected = cpu_gemm_fp64(host_a, host_b, p);
    for (float& value : host_a) value = std::fabs(value);
    for (float& value : host_b) value = std::fabs(value);
    result.against_cpu = verify_on_host(d, expected, cpu_gemm_fp64(host_a, host_b, p), per_unit);
  }
  // (The buffers above are freed when this returns: the stream must be done with them.)
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return result;
}

void BlockScaledE4m3::run_fp8_reference(const ProblemBuffers& buffers, Fp8Scaling scaling,
                                        cudaStream_t stream) {
  if (!fp8_reference_) fp8_reference_ = std::make_unique<Fp8Reference>();
  fp8_reference_->run(buffers.problem, scaling, inputs_, buffers.d, stream);
}

void BlockScaledE4m3::quantize_again(const ProblemBuffers& buffers, cudaStream_t stream) {
  inputs_.quantize_blocks(buffers.problem, buffers.a, buffers.b, stream);
}

std::vector<Workload::Comparison> BlockScaledE4m3::comparisons(const ProblemBuffers& buffers) {
  std::vector<Comparison> list;
  if (Fp8Reference::block_scaling_takes(buffers.problem))
    list.push_back({Fp8Reference::describe(Fp8Scaling::per_tensor), [this, buffers](cudaStream_t s) {
                      run_fp8_reference(buffers, Fp8Scaling::per_tensor, s);
                    }});
  list.push_back({"quantizing A (1x128) and B (128x128) from bf16",
                  [this, buffers](cudaStream_t s) { quantize_again(buffers, s); }});
  return list;
}

namespace workloads {
// Lesson 18's contract; e4m3 on a Hopper SM: twice bf16's rate, 8192 FLOP per clock (the block
// scales add work, never speed).
const WorkloadKind kind_e4m3_block_scaled{
    "e4m3_block_scaled", kBlockScaledKMultiple, 8192, &block_scaled_contract_violation,
    [] { return std::unique_ptr<Workload>(new BlockScaledE4m3()); }};
}  // namespace workloads

}  // namespace gemm
