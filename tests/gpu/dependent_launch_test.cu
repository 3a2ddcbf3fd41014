// Lesson 17: programmatic dependent launch.
//
// - The lesson's own check (LessonRunner::check) makes a kernel's inputs arrive late, from a
//   kernel ahead of it that lets it start at once (common/harness/late_inputs.hpp). That check must be
//   able to fail: lesson 15's kernel, which has no griddepcontrol.wait, launched the same way as a
//   dependent, reads the inputs before they are there.
// - The MLP chain (common/mlp/mlp_chain.hpp), four ways, at token counts below, at
//   and above one tile of rows, ragged included: H and Y checked.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/hopper/epilogue_tma_store.hpp"
#include "common/hopper/gemm_kernel.cuh"
#include "common/hopper/mainloop_bf16.hpp"
#include "common/mlp/mlp_chain.hpp"
#include "common/ptx/grid_dependency.hpp"
#include "common/references/reference.hpp"
#include "lessons/registry.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace {

// Lesson 15's kernel started as a dependent, without the wait: what lesson 17 must not be. A launch
// policy that asks for the dependent launch and leaves both places empty.
struct DependentWithoutWait {
  static constexpr bool kAfterPrerequisite = true;
  __device__ static void before_first_load() {}
  __device__ static void after_last_load() {}
};
template <class Kind>
using WithoutWaitKernel = gemm::hopper::Kernel<
    gemm::hopper::KernelTile<128, 256, 2, 4>, gemm::hopper::Bf16Mainloop,
    gemm::taught::TmaStoreEpilogue<gemm::hopper::KernelTile<128, 256, 2, 4>, Kind>,
    gemm::hopper::StreamKScheduler, DependentWithoutWait>;
using WithoutWait = gemm::hopper::OneConfiguration<WithoutWaitKernel, gemm::kStreamKMinIterations>;

gemm::Lesson lesson_without_wait() {
  gemm::Lesson lesson = gemm::lessons::lesson17();
  lesson.plan = &WithoutWait::plan;
  lesson.launch_planned = &WithoutWait::launch;
  lesson.configurations = nullptr;
  lesson.configuration_count = 0;
  return lesson;
}

// Stand-ins for a kernel that waits for its prerequisite but writes too early: a small kernel,
// launched as a dependent, stores into D or into the workspace and only then waits; after it, in
// stream order, cuBLAS computes D correctly. D ends right, so only the watch of the late-input
// check can tell (the kernel ahead may still be reading what was overwritten). The same kernel
// with its store after the wait must pass.
enum class Store { d_before_wait, workspace_before_wait, d_after_wait };

namespace ptx = gemm::ptx;

template <Store kStore>
__global__ void store_then_wait(gemm::bf16* d, uint32_t* workspace) {
  if (kStore == Store::d_before_wait) d[threadIdx.x] = gemm::bf16(1.0f);
  if (kStore == Store::workspace_before_wait) workspace[threadIdx.x] += 1;  // a change every launch
  ptx::wait_for_prerequisite_grids();
  if (kStore == Store::d_after_wait) d[threadIdx.x] = gemm::bf16(1.0f);
}

template <Store kStore>
void store_then_cublas(const gemm::GemmArgs& args, cudaStream_t stream) {
  static gemm::CublasGemm* cublas = new gemm::CublasGemm();
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(8);
  config.stream = stream;
  cudaLaunchAttribute dependent[1];
  dependent[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = dependent;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, store_then_wait<kStore>, args.d,
                                static_cast<uint32_t*>(args.workspace)));
  cublas->run_bf16_output(args.problem, args.a, args.b, args.d, stream);
}

size_t small_workspace(const gemm::GemmProblem&) { return 256; }

template <Store kStore>
using StoreThenWaitLaunch = gemm::OneLaunch<&store_then_cublas<kStore>, &small_workspace>;
template <Store kStore>
constexpr gemm::Lesson kStoreThenWait{.id = 96, .slug = "store_then_wait", .title = "bug",
                                      .min_arch = gemm::MinArch::sm90a,
                                      .plan = &StoreThenWaitLaunch<kStore>::plan,
                                      .launch_planned = &StoreThenWaitLaunch<kStore>::launch,
                                      .waits_for_prerequisite = true};

// Every test needs a GPU that runs lesson 17 (sm_90a): skipped without one, failed with
// REQUIRE_GPU=1.
class DependentLaunch : public testing::Test {
 protected:
  void SetUp() override {
    if (const auto reason = gemm::unsupported_reason(gemm::lessons::lesson17(), runner.device())) {
      if (gpu_test_support::gpu_required()) FAIL() << "REQUIRE_GPU=1: " << *reason;
      GTEST_SKIP() << *reason;
    }
  }
  gemm::LessonRunner& runner = gpu_test_support::shared_runner();
};

TEST_F(DependentLaunch, CheckCatchesAKernelThatDoesNotWait) {
  const gemm::Lesson without_wait = lesson_without_wait();
  for (const gemm::GemmProblem problem :
       {gemm::GemmProblem{4096, 4096, 4096}, gemm::GemmProblem{333, 136, 264},
        gemm::GemmProblem{1, 8, 8}}) {
    runner.set_problem(problem, /*seed=*/71);
    const gemm::CheckResult result = runner.check(without_wait);
    EXPECT_FALSE(result.passed()) << problem.m << " x " << problem.n << " x " << problem.k
                                  << ": a kernel without griddepcontrol.wait passed the check";
    EXPECT_TRUE(runner.check(gemm::lessons::lesson17()).passed())
        << problem.m << " x " << problem.n << " x " << problem.k << ": lesson 17";
  }
}

TEST_F(DependentLaunch, CheckCatchesAKernelThatWritesBeforeItsWait) {
  runner.set_problem(gemm::GemmProblem{256, 128, 64}, /*seed=*/72);
  const gemm::CheckResult d_early = runner.check(kStoreThenWait<Store::d_before_wait>);
  EXPECT_FALSE(d_early.passed()) << "a store into D before griddepcontrol.wait passed the check";
  EXPECT_GT(d_early.early_writes.d_elements, 0);
  EXPECT_EQ(d_early.early_writes.workspace_words, 0);
  EXPECT_TRUE(d_early.against_cublas.passed()) << "D itself ends right: only the watch can tell";

  const gemm::CheckResult workspace_early =
      runner.check(kStoreThenWait<Store::workspace_before_wait>);
  EXPECT_FALSE(workspace_early.passed())
      << "a store into the workspace before griddepcontrol.wait passed the check";
  EXPECT_GT(workspace_early.early_writes.workspace_words, 0);

  const gemm::CheckResult after = runner.check(kStoreThenWait<Store::d_after_wait>);
  EXPECT_TRUE(after.passed()) << "the same store after the wait must pass: "
                              << after.early_writes.d_elements << " early elements of D";
}

TEST_F(DependentLaunch, MlpChainCorrectFourWays) {
  for (const int64_t tokens : {64, 333, 2048}) {
    gemm::MlpShape shape;
    shape.tokens = tokens;
    gemm::MlpChain chain(shape, /*seed=*/tokens, runner.stream(), gemm::lessons::lesson16(),
                         gemm::lessons::lesson17());
    for (const gemm::ChainVariant variant : gemm::kChainVariants) {
      const gemm::ChainCheck check = chain.check(variant);
      EXPECT_TRUE(check.hidden.passed())
          << tokens << " tokens, " << gemm::variant_name(variant)
          << ", H: " << check.hidden.summary(shape.d_ff);
      EXPECT_TRUE(check.output.passed())
          << tokens << " tokens, " << gemm::variant_name(variant)
          << ", Y: " << check.output.summary(shape.d_model);
    }
  }
}

}  // namespace
