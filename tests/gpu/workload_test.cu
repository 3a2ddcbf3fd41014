// A third kind of workload, written here in the test tree and run through the runner's check
// without any change to the runner (common/workloads/workload.hpp): D = diag(s) A B^T, a bf16
// product whose rows are scaled by a per-row factor s, with a toy lesson that computes it. The
// runner draws A and B, the workload makes s, the lesson computes D, and the workload's check
// compares D with cuBLAS's product scaled the same way: the right lesson passes, and one that
// forgets the scales fails.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "common/device_buffer.hpp"
#include "common/harness/runner.hpp"
#include "common/harness/verify.hpp"
#include "common/references/reference.hpp"
#include "common/workloads/workload.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace {

using gemm::bf16;

// The scales of the current problem, where the toy lesson's launch finds them (a real kind would
// hand them over in GemmArgs, as lesson 18's does its block scales).
const float* g_row_scales = nullptr;

// s[i] = 1 + (i mod 7) / 8: every row a different, exactly representable factor.
__global__ void make_row_scales(float* scales, int64_t rows) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < rows) scales[i] = 1.0f + float(i % 7) / 8.0f;
}

// One thread per element of D (or of the fp32 reference, scaled in place).
__global__ void row_scaled_product(const bf16* a, const bf16* b, const float* scales, bf16* d,
                                   int64_t m, int64_t n, int64_t k) {
  const int64_t column = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, row = blockIdx.y;
  if (column >= n) return;
  float sum = 0;
  for (int64_t i = 0; i < k; ++i) sum += float(a[row * k + i]) * float(b[column * k + i]);
  d[row * n + column] = bf16(scales ? scales[row] * sum : sum);
}
__global__ void scale_rows(float* values, const float* scales, int64_t n) {
  const int64_t column = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, row = blockIdx.y;
  if (column < n) values[row * n + column] *= scales[row];
}

void launch_product(const gemm::GemmArgs& args, const float* scales, cudaStream_t stream) {
  const auto& p = args.problem;
  row_scaled_product<<<dim3(unsigned((p.n + 127) / 128), unsigned(p.m)), 128, 0, stream>>>(
      args.a, args.b, scales, args.d, p.m, p.n, p.k);
}
void launch_row_scaled(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch_product(args, g_row_scales, stream);
}
void launch_scales_forgotten(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch_product(args, nullptr, stream);
}

class RowScaled final : public gemm::Workload {
 public:
  std::string describe_inputs() const override {
    return "bf16 in, fp32 accumulate, rows scaled, bf16 out";
  }
  void make_inputs(const gemm::ProblemBuffers& buffers, cudaStream_t stream) override {
    scales_.resize(size_t(buffers.problem.m));
    make_row_scales<<<unsigned((buffers.problem.m + 255) / 256), 256, 0, stream>>>(
        scales_.get(), buffers.problem.m);
    g_row_scales = scales_.get();
  }
  gemm::CheckResult verify(const gemm::ProblemBuffers& buffers, bool, cudaStream_t stream) override {
    const auto& p = buffers.problem;
    reference_.resize(size_t(p.m * p.n));
    cublas_.run_fp32_output(p, buffers.a, buffers.b, reference_.get(), stream);
    scale_rows<<<dim3(unsigned((p.n + 127) / 128), unsigned(p.m)), 128, 0, stream>>>(
        reference_.get(), scales_.get(), p.n);
    gemm::CheckResult result;
    result.against_cublas = gemm::verify_on_device(buffers.d, reference_.get(), p.m * p.n,
                                                   buffers.d + p.m * p.n, buffers.guard_elements,
                                                   stream);
    return result;
  }
  std::string check_reference_name(const gemm::ProblemBuffers&) const override {
    return "cuBLAS fp32, rows scaled";
  }
  std::string timing_reference_name(const gemm::ProblemBuffers&) const override { return "cuBLAS"; }
  void run_timing_reference(const gemm::ProblemBuffers& buffers, cudaStream_t stream) override {
    cublas_.run_bf16_output(buffers.problem, buffers.a, buffers.b, buffers.d, stream);
  }

 private:
  gemm::DeviceBuffer<float> scales_, reference_;
  gemm::CublasGemm cublas_;
};

const gemm::WorkloadKind kRowScaled{"bf16_row_scaled", gemm::kShapeMultiple, 4096,
                                    &gemm::shape_contract_violation,
                                    [] { return std::unique_ptr<gemm::Workload>(new RowScaled()); }};

template <gemm::LaunchFunction Launch>
gemm::Lesson toy_lesson() {
  gemm::Lesson lesson{.min_arch = gemm::MinArch::sm80,
                      .plan = &gemm::OneLaunch<Launch>::plan,
                      .launch_planned = &gemm::OneLaunch<Launch>::launch};
  lesson.id = 90;
  lesson.slug = "row_scaled";
  lesson.title = "a toy lesson of a third kind of workload";
  lesson.workload = &kRowScaled;
  return lesson;
}

TEST(Workload, AThirdKindRunsThroughTheRunnersCheck) {
  gemm::LessonRunner& runner = gpu_test_support::shared_runner();
  const gemm::Lesson right = toy_lesson<&launch_row_scaled>();
  const gemm::Lesson forgets = toy_lesson<&launch_scales_forgotten>();
  // Ragged, so that the guard zone and the last rows count.
  runner.set_problem({77, 72, 40}, /*seed=*/5, {}, kRowScaled);
  const gemm::CheckResult passed = runner.check(right);
  EXPECT_TRUE(passed.passed()) << passed.against_cublas.summary(72);
  EXPECT_EQ(runner.report_for(right).check_reference, "cuBLAS fp32, rows scaled");
  const gemm::CheckResult failed = runner.check(forgets);
  EXPECT_FALSE(failed.passed()) << "a lesson that forgets the scales must fail";
  // Rows with i mod 7 == 0 are scaled by 1: every other row fails.
  EXPECT_GT(failed.against_cublas.mismatches, 77 * 72 / 2);
}

}  // namespace
