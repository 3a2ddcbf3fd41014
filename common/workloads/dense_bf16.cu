// The dense bf16 workload (common/workloads/workload.hpp): lessons 01-17's A and B as drawn, D
// checked against cuBLAS (cuBLASLt for a fused epilogue) and fp64 on the CPU, timed against the
// same with a bf16 output.
#include <memory>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/references/epilogue_cpu.hpp"
#include "common/references/epilogue_reference.hpp"
#include "common/references/reference.hpp"
#include "common/workloads/kinds.hpp"
#include "common/workloads/workload.hpp"

namespace gemm {

namespace {

std::vector<float> download_as_float(const bf16* data, size_t count, cudaStream_t stream) {
  const std::vector<bf16> values = download(data, count, stream);
  return std::vector<float>(values.begin(), values.end());
}

class DenseBf16 final : public Workload {
 public:
  std::string describe_inputs() const override { return "bf16 in, fp32 accumulate, bf16 out"; }

  CheckResult verify(const ProblemBuffers& buffers, bool on_cpu, cudaStream_t stream) override {
    const GemmProblem& p = buffers.problem;
    const int64_t elements = p.m * p.n;
    reference_.resize(size_t(elements));
    if (buffers.epilogue.is_plain())
      cublas_.run_fp32_output(p, buffers.a, buffers.b, reference_.get(), stream);
    else
      epilogue_reference().run(p, buffers.a, buffers.b, buffers.epilogue, reference_.get(),
                               CUDA_R_32F, stream);
    CheckResult result;
    result.against_cublas = verify_on_device(buffers.d, reference_.get(), elements,
                                             buffers.d + elements, buffers.guard_elements, stream);
    if (on_cpu) {
      const std::vector<float> a = download_as_float(buffers.a, size_t(p.m * p.k), stream);
      const std::vector<float> b = download_as_float(buffers.b, size_t(p.n * p.k), stream);
      std::vector<double> expected = cpu_gemm_fp64(a, b, p);
      const Epilogue& fused = buffers.epilogue;
      if (!fused.is_plain())
        expected = cpu_epilogue_fp64(
            expected, p, fused,
            download_as_float(fused.c, fused.c ? size_t(elements) : 0, stream),
            download_as_float(fused.bias, fused.bias ? size_t(p.n) : 0, stream));
      result.against_cpu = verify_on_host(download(buffers.d, size_t(elements), stream), expected);
    }
    return result;
  }

  std::string check_reference_name(const ProblemBuffers& buffers) const override {
    return timing_reference_name(buffers) + " fp32";
  }
  std::string timing_reference_name(const ProblemBuffers& buffers) const override {
    return buffers.epilogue.is_plain() ? "cuBLAS" : EpilogueReference::describe(buffers.epilogue);
  }
  void run_timing_reference(const ProblemBuffers& buffers, cudaStream_t stream) override {
    if (buffers.epilogue.is_plain())
      cublas_.run_bf16_output(buffers.problem, buffers.a, buffers.b, buffers.d, stream);
    else
      epilogue_reference().run(buffers.problem, buffers.a, buffers.b, buffers.epilogue, buffers.d,
                               CUDA_R_16BF, stream);
  }

 private:
  // cuBLASLt (and its workspace) only for a problem with a fused epilogue.
  EpilogueReference& epilogue_reference() {
    if (!epilogue_reference_) epilogue_reference_ = std::make_unique<EpilogueReference>();
    return *epilogue_reference_;
  }

  CublasGemm cublas_;
  std::unique_ptr<EpilogueReference> epilogue_reference_;
  DeviceBuffer<float> reference_;
};

}  // namespace

namespace workloads {
// The course's contract; bf16 on a Hopper SM: 4 tensor cores x 512 multiply-adds per clock, 4096
// FLOP.
const WorkloadKind kind_bf16{"bf16", kShapeMultiple, 4096, &shape_contract_violation,
                             [] { return std::unique_ptr<Workload>(new DenseBf16()); }};
}  // namespace workloads

}  // namespace gemm
