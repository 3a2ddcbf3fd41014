// The harness's own checks must be able to fail: each test below plants one specific fault in an
// otherwise correct output and asserts that verification reports exactly that fault.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/harness/verify.hpp"
#include "lessons/registry.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace {

using gemm::bf16;
using gemm::GemmArgs;
using gemm::GemmProblem;
using gemm::Lesson;
using gpu_test_support::shared_runner;

// A stand-in "lesson" that gets everything right: cuBLAS with bf16 output.
void cublas_launch(const GemmArgs& args, cudaStream_t stream) {
  static gemm::CublasGemm* cublas = new gemm::CublasGemm();
  cublas->run_bf16_output(args.problem, args.a, args.b, args.d, stream);
}
using CublasLaunch = gemm::OneLaunch<&cublas_launch>;
constexpr Lesson kCublasLesson{.id = 99, .slug = "cublas", .title = "cuBLAS",
                               .min_arch = gemm::MinArch::sm80, .plan = &CublasLaunch::plan,
                               .launch_planned = &CublasLaunch::launch};

// A faulty "lesson": lesson 01's kernel told that M is one row smaller, so the last row of D is
// never written (what a kernel that forgets the last, partial row tile does).
void skip_last_row_launch(const GemmArgs& args, cudaStream_t stream) {
  GemmArgs fewer_rows = args;
  fewer_rows.problem.m -= 1;
  const Lesson& lesson01 = *gemm::find_lesson(1);
  gemm::launch_planned(lesson01, fewer_rows, gemm::plan_launch(lesson01, fewer_rows.problem),
                       stream);
}
using SkipLastRowLaunch = gemm::OneLaunch<&skip_last_row_launch>;
constexpr Lesson kSkipLastRowLesson{.id = 98, .slug = "skip_last_row", .title = "bug",
                                    .min_arch = gemm::MinArch::sm80,
                                    .plan = &SkipLastRowLaunch::plan,
                                    .launch_planned = &SkipLastRowLaunch::launch};

// A faulty "lesson" whose result depends on what the launch before it left in the workspace, like
// a Stream-K fixup that never resets its flags: the first launch into a zeroed workspace computes
// D with cuBLAS and keeps a copy; every later launch returns that copy. It declares that its
// workspace resets itself, so the harness zeroes it only once. On the same inputs every launch is
// right; on new inputs, every launch but the first is wrong.
// Its workspace: a flag, then the copy of D, 16-byte aligned.
constexpr size_t kRememberedCopyOffset = 16;

size_t remembering_workspace_bytes(const GemmProblem& problem) {
  return kRememberedCopyOffset + size_t(problem.m * problem.n) * sizeof(bf16);
}

__global__ void remember_or_recall(const int* launched, bf16* copy, bf16* d, int64_t count) {
  const bool recall = *launched != 0;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    if (recall) d[i] = copy[i];
    else copy[i] = d[i];
  }
}

__global__ void mark_launched(int* launched) { *launched = 1; }

void remembering_launch(const GemmArgs& args, cudaStream_t stream) {
  cublas_launch(args, stream);
  auto* workspace = static_cast<unsigned char*>(args.workspace);
  int* launched = reinterpret_cast<int*>(workspace);
  bf16* copy = reinterpret_cast<bf16*>(workspace + kRememberedCopyOffset);
  remember_or_recall<<<64, 256, 0, stream>>>(launched, copy, args.d, args.problem.m * args.problem.n);
  mark_launched<<<1, 1, 0, stream>>>(launched);
}
size_t remembering_flag_bytes(const GemmProblem&) { return kRememberedCopyOffset; }

using RememberingLaunch = gemm::OneLaunch<&remembering_launch, &remembering_workspace_bytes,
                                         &remembering_flag_bytes>;
constexpr Lesson kRememberingLesson{.id = 97, .slug = "remembering", .title = "bug",
                                    .min_arch = gemm::MinArch::sm80, .zeroed_workspace = true,
                                    .workspace_resets_itself = true,
                                    .plan = &RememberingLaunch::plan,
                                    .launch_planned = &RememberingLaunch::launch};

void set_element(bf16* device_data, int64_t index, uint16_t bits) {
  CUDA_CHECK(cudaMemcpy(device_data + index, &bits, sizeof(bits), cudaMemcpyHostToDevice));
}

uint16_t get_element(const bf16* device_data, int64_t index) {
  uint16_t bits;
  CUDA_CHECK(cudaMemcpy(&bits, device_data + index, sizeof(bits), cudaMemcpyDeviceToHost));
  return bits;
}

class Harness : public testing::Test {
 protected:
  void SetUp() override {
    shared_runner().set_problem(kProblem, /*seed=*/7);
    const gemm::CheckResult correct = shared_runner().check(kCublasLesson);
    ASSERT_TRUE(correct.passed()) << correct.against_cublas.summary(kProblem.n);
  }
  static constexpr GemmProblem kProblem{96, 64, 128};
  static constexpr int64_t kRow = 37, kCol = 21, kIndex = kRow * 64 + kCol;
};

TEST_F(Harness, CorrectOutputPassesBothReferences) {
  const gemm::CheckResult result = shared_runner().verify_current_output();
  EXPECT_TRUE(result.passed());
  ASSERT_TRUE(result.against_cpu) << "a shape this small is also checked against fp64 on the CPU";
  EXPECT_LT(result.against_cublas.max_normalized_error, 0.5);
  EXPECT_EQ(result.against_cublas.elements, kProblem.m * kProblem.n);
}

TEST_F(Harness, ReportsOneWrongElement) {
  // Flip the sign of one element (bit 15): a wrong value far outside the tolerance.
  const uint16_t bits = get_element(shared_runner().d(), kIndex);
  set_element(shared_runner().d(), kIndex, bits ^ 0x8000);
  const gemm::CheckResult result = shared_runner().verify_current_output();
  EXPECT_FALSE(result.passed());
  EXPECT_EQ(result.against_cublas.mismatches, 1);
  EXPECT_EQ(result.against_cublas.first_mismatch, kIndex);
  EXPECT_EQ(result.against_cublas.nan_or_inf, 0);
  EXPECT_EQ(result.against_cublas.unwritten, 0);
  ASSERT_TRUE(result.against_cpu);
  EXPECT_EQ(result.against_cpu->mismatches, 1);
  EXPECT_NE(result.against_cublas.summary(kProblem.n).find("row 37 col 21"), std::string::npos);
}

// Lesson 19 widens the rule element by element (gemm::ExtraAllowance): the allowance must count
// where it is given and nowhere else.
TEST_F(Harness, AnExtraAllowanceWidensTheRuleOnlyWhereItIsGiven) {
  // Reference 1 everywhere; element 2 of D is 1.0625, off by 2^-4, four times the rule's
  // 2^-7 |ref| + 2^-7 rms(ref) = 2^-6. A magnitude of 8 at 2^-7 per unit adds 2^-4 there.
  const std::vector<float> reference(4, 1.0f);
  std::vector<bf16> d(4, __float2bfloat16(1.0f));
  d[2] = __float2bfloat16(1.0625f);
  gemm::DeviceBuffer<float> reference_on_gpu(4), magnitude(4);
  gemm::DeviceBuffer<bf16> d_on_gpu(4);
  CUDA_CHECK(cudaMemcpy(reference_on_gpu.get(), reference.data(), 4 * sizeof(float),
                        cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_on_gpu.get(), d.data(), 4 * sizeof(bf16), cudaMemcpyHostToDevice));
  const auto verify_with_magnitude_at = [&](int index) {
    std::vector<float> magnitudes(4, 0.0f);
    if (index >= 0) magnitudes[size_t(index)] = 8.0f;
    CUDA_CHECK(cudaMemcpy(magnitude.get(), magnitudes.data(), 4 * sizeof(float),
                          cudaMemcpyHostToDevice));
    const gemm::ExtraAllowance extra{index >= 0 ? magnitude.get() : nullptr, 1.0 / 128.0};
    return gemm::verify_on_device(d_on_gpu.get(), reference_on_gpu.get(), 4, nullptr, 0, nullptr,
                                  extra);
  };
  const gemm::VerifyReport plain = verify_with_magnitude_at(-1);
  EXPECT_EQ(plain.mismatches, 1);
  EXPECT_EQ(plain.first_mismatch, 2);
  EXPECT_TRUE(verify_with_magnitude_at(2).passed());
  const gemm::VerifyReport elsewhere = verify_with_magnitude_at(1);
  EXPECT_EQ(elsewhere.mismatches, 1);
  EXPECT_EQ(elsewhere.first_mismatch, 2);
}

TEST_F(Harness, ReportsAnUnwrittenElement) {
  set_element(shared_runner().d(), kIndex, gemm::kPoisonBits);
  const gemm::CheckResult result = shared_runner().verify_current_output();
  EXPECT_FALSE(result.passed());
  EXPECT_EQ(result.against_cublas.mismatches, 1);
  EXPECT_EQ(result.against_cublas.unwritten, 1);
  EXPECT_EQ(result.against_cpu->unwritten, 1);
}

TEST_F(Harness, ReportsNanAndInf) {
  set_element(shared_runner().d(), kIndex, 0x7FC0);      // NaN
  set_element(shared_runner().d(), kIndex + 1, 0x7F80);  // +Inf
  const gemm::CheckResult result = shared_runner().verify_current_output();
  EXPECT_FALSE(result.passed());
  EXPECT_EQ(result.against_cublas.mismatches, 2);
  EXPECT_EQ(result.against_cublas.nan_or_inf, 2);
  EXPECT_EQ(result.against_cublas.unwritten, 0);
}

TEST_F(Harness, ReportsAWritePastTheEndOfD) {
  gemm::LessonRunner& runner = shared_runner();
  ASSERT_GT(runner.guard_elements(), 0);
  set_element(runner.d(), runner.d_elements() + 5, 0x3F80);  // 1.0 just past the last row
  const gemm::CheckResult result = runner.verify_current_output();
  EXPECT_FALSE(result.passed());
  EXPECT_EQ(result.against_cublas.mismatches, 0);
  EXPECT_EQ(result.against_cublas.guard_overwritten, 1);
}

TEST_F(Harness, CatchesALessonThatSkipsTheLastRow) {
  const gemm::CheckResult result = shared_runner().check(kSkipLastRowLesson);
  EXPECT_FALSE(result.passed());
  EXPECT_EQ(result.against_cublas.unwritten, kProblem.n);
  EXPECT_EQ(result.against_cublas.first_mismatch, (kProblem.m - 1) * kProblem.n);
}

// The grader runs each shape in a process of its own, so the checked launch of a lesson whose
// workspace resets itself is the first into a freshly zeroed workspace: a kernel that leaves it
// dirty would pass. The check launches such a lesson on other inputs first.
TEST_F(Harness, CatchesALessonThatDependsOnThePreviousLaunch) {
  gemm::LessonRunner& runner = shared_runner();
  runner.set_problem(kProblem, /*seed=*/11);
  const gemm::CheckResult result = runner.check(kRememberingLesson);
  EXPECT_FALSE(result.passed()) << "a launch that returns the previous launch's result passed";
  EXPECT_GT(result.against_cublas.mismatches, kProblem.m * kProblem.n / 2);
  // Its flag, which it never resets, fails the check by itself, whatever the output.
  EXPECT_EQ(result.flag_bytes_left_set, 1);
  // The same kernel with a workspace zeroed before every launch is right every time.
  Lesson zeroed_every_time = kRememberingLesson;
  zeroed_every_time.workspace_resets_itself = false;
  EXPECT_TRUE(runner.check(zeroed_every_time).passed());
}

TEST_F(Harness, PairedTimingIsPositiveOrderedAndPaired) {
  gemm::TimingOptions options;
  options.warmup = 1;
  options.warmup_seconds = 0;
  options.pairs = 5;
  options.min_timed_seconds = 0;
  const gemm::PairedTiming timing = shared_runner().time_against_reference(kCublasLesson, options);
  EXPECT_EQ(timing.pairs, 5);
  EXPECT_EQ(timing.lesson.samples, 5);
  EXPECT_EQ(timing.reference.samples, 5);
  EXPECT_GT(timing.lesson.min_ms, 0.0);
  EXPECT_LE(timing.lesson.min_ms, timing.lesson.median_ms);
  EXPECT_LE(timing.lesson.median_ms, timing.lesson.max_ms);
  EXPECT_LE(timing.ratio_min, timing.ratio);
  EXPECT_LE(timing.ratio, timing.ratio_max);
  // The "lesson" here is cuBLAS itself: the same work on both sides of every pair.
  EXPECT_GT(timing.ratio, 0.5);
  EXPECT_LT(timing.ratio, 2.0);
}

TEST_F(Harness, SmallShapesGetMorePairs) {
  gemm::TimingOptions options;
  options.warmup = 1;
  options.warmup_seconds = 0;
  options.pairs = 5;
  options.min_timed_seconds = 0.05;  // 96 x 64 x 128 runs in microseconds: far more than 5 pairs
  const gemm::PairedTiming timing = shared_runner().time_against_reference(kCublasLesson, options);
  EXPECT_GT(timing.pairs, 5);
  EXPECT_LE(timing.pairs, options.max_pairs);
}

TEST_F(Harness, ClockIsReportedWhereNvmlIs) {
  gemm::TimingOptions options;
  options.warmup = 1;
  options.pairs = 3;
  const gemm::PairedTiming timing = shared_runner().time_against_reference(kCublasLesson, options);
  if (!timing.clock.available) GTEST_SKIP() << timing.clock.summary();
  EXPECT_GE(timing.clock.samples, 2);
  EXPECT_GT(timing.clock.sm_mhz_median, 100.0);
  EXPECT_GT(timing.clock.power_w_peak, 1.0);
}

TEST_F(Harness, ReportsTheSameHashForTheSameOutput) {
  const gemm::CheckResult first = shared_runner().verify_current_output();
  const gemm::CheckResult second = shared_runner().verify_current_output();
  EXPECT_EQ(first.output_hash, second.output_hash);
  set_element(shared_runner().d(), kIndex, get_element(shared_runner().d(), kIndex) ^ 1);
  EXPECT_NE(shared_runner().verify_current_output().output_hash, first.output_hash);
}

// A kernel that never finishes: it waits for a flag nobody sets, like a pipeline waiting on a
// barrier phase that never completes.
__global__ void wait_for_flag_forever(const volatile int* flag) {
  while (*flag == 0) {
  }
}

// Launches that kernel and waits for it with a 2-second deadlock timeout.
void wait_for_a_kernel_that_never_finishes() {
  int* flag = nullptr;
  CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
  CUDA_CHECK(cudaMemset(flag, 0, sizeof(int)));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  wait_for_flag_forever<<<1, 1, 0, stream>>>(flag);
  gemm::synchronize_or_timeout(stream, 2.0);
}

// The deadlock timeout must end the process with exit code 5 and one line, not hang. Run as a
// death test: in a fresh copy of this test program, so the hung kernel dies with that copy.
TEST(HarnessDeathTest, DeadlockedKernelEndsTheProcessWithExitCode5) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(wait_for_a_kernel_that_never_finishes(),
              testing::ExitedWithCode(gemm::kExitCudaError), "probably deadlocked");
}

TEST(HarnessInputs, SameSeedSameInputsOtherSeedOtherInputs) {
  gemm::LessonRunner& runner = shared_runner();
  const GemmProblem problem{64, 64, 64};
  const auto download_a = [&] {
    std::vector<uint16_t> a(problem.m * problem.k);
    CUDA_CHECK(cudaMemcpy(a.data(), runner.a(), a.size() * 2, cudaMemcpyDeviceToHost));
    return a;
  };
  runner.set_problem(problem, 3);
  const auto first = download_a();
  runner.set_problem(problem, 3);
  EXPECT_EQ(download_a(), first);
  runner.set_problem(problem, 4);
  EXPECT_NE(download_a(), first);
  // Never zeros, always inside [-1, 1].
  int zeros = 0;
  for (uint16_t bits : first) {
    float value;
    const uint32_t widened = uint32_t(bits) << 16;
    std::memcpy(&value, &widened, sizeof(value));
    EXPECT_LE(std::abs(value), 1.0f);
    zeros += value == 0.0f;
  }
  EXPECT_LT(zeros, 4);
}

}  // namespace
