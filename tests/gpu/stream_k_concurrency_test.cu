// Stream-K (lessons 14-17) next to other work on the GPU, and on a workspace zeroed once.
//
// A Stream-K part waits, spinning, for the parts of other clusters of its grid. That is safe only
// if those clusters are running or can start: a grid whose clusters wait for clusters that cannot
// be scheduled, because the SMs are held by the waiters themselves and by another kernel, never
// finishes. Lessons 14-16 launch their grids cooperatively (gemm::Residency::all_at_once): all of a
// grid's clusters are resident at once, or the grid does not start until they can be. Lesson 17
// never does: its launches are dependent launches, which gemm::launch_clusters never makes
// cooperative (common/launch.hpp); its grid is only sized to fit the GPU (resident_clusters). Here
// the last two Stream-K lessons of the registry (16 and 17: one cooperative grid, one not), each
// sized to fill the whole GPU, are launched on two streams at the same time, again and again: they
// must finish (the ctest time limit catches a deadlock) and compute the same bits as when each
// runs alone.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace {

using gemm::bf16;

// Every tile of this shape is cut into parts (the GPU tests' "every_tile_split").
constexpr gemm::GemmProblem kStreamKShape{256, 512, 65536};
constexpr int kRounds = 20;

// One lesson's own output and workspace, on its own stream.
struct Instance {
  const gemm::Lesson* lesson;
  gemm::LaunchPlan plan;
  gemm::DeviceBuffer<bf16> d;
  gemm::DeviceBuffer<unsigned char> workspace;
  cudaStream_t stream = nullptr;
};

// Waits for the stream, failing (instead of hanging) after `seconds`.
bool finished_within(cudaStream_t stream, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    const cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaSuccess) return true;
    if (status != cudaErrorNotReady) CUDA_CHECK(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// The registered lessons that `wanted` picks and this GPU can run, in registry order.
std::vector<const gemm::Lesson*> runnable_lessons(const gemm::LessonRunner& runner,
                                                  bool (*wanted)(const gemm::Lesson&)) {
  std::vector<const gemm::Lesson*> lessons;
  for (const gemm::Lesson& lesson : gemm::all_lessons())
    if (wanted(lesson) && !gemm::unsupported_reason(lesson, runner.device()))
      lessons.push_back(&lesson);
  return lessons;
}

TEST(StreamKConcurrency, TwoStreamKGridsAtOnceFinishWithTheirOwnBits) {
  gemm::LessonRunner& runner = gpu_test_support::shared_runner();
  const std::vector<const gemm::Lesson*> lessons = runnable_lessons(
      runner, [](const gemm::Lesson& lesson) { return lesson.zeroed_workspace; });
  if (lessons.empty()) {
    if (gpu_test_support::gpu_required()) FAIL() << "REQUIRE_GPU=1: no Stream-K lesson runs here";
    GTEST_SKIP() << "no Stream-K lesson can run on this GPU";
  }
  // Two instances: the last two Stream-K lessons, or the same one twice.
  const gemm::Lesson* first = lessons.size() > 1 ? lessons[lessons.size() - 2] : lessons.back();
  const gemm::Lesson* second = lessons.back();

  runner.set_problem(kStreamKShape, /*seed=*/31);
  // What each computes alone (checked against cuBLAS on the way).
  std::vector<std::vector<bf16>> alone;
  for (const gemm::Lesson* lesson : {first, second}) {
    ASSERT_TRUE(runner.check(*lesson).passed()) << gemm::lesson_name(*lesson) << " alone";
    alone.push_back(runner.download_d());
  }

  gemm::GemmArgs args;
  args.problem = kStreamKShape;
  args.a = runner.a();
  args.b = runner.b();
  std::vector<Instance> instances;
  for (const gemm::Lesson* lesson : {first, second}) {
    const gemm::LaunchPlan plan = gemm::plan_launch(*lesson, kStreamKShape);
    Instance instance{lesson, plan, gemm::DeviceBuffer<bf16>(size_t(runner.d_elements())),
                      gemm::DeviceBuffer<unsigned char>(plan.workspace_bytes)};
    CUDA_CHECK(cudaStreamCreateWithFlags(&instance.stream, cudaStreamNonBlocking));
    instances.push_back(std::move(instance));
  }
  // Each workspace starts zeroed; a lesson whose workspace does not reset itself gets it zeroed
  // again before each of its launches.
  for (Instance& instance : instances)
    CUDA_CHECK(cudaMemsetAsync(instance.workspace.get(), 0, instance.workspace.bytes(),
                               instance.stream));
  // Both grids are queued before either can finish: each round launches the two back to back.
  for (int round = 0; round < kRounds; ++round)
    for (Instance& instance : instances) {
      if (round > 0 && !instance.lesson->workspace_resets_itself)
        CUDA_CHECK(cudaMemsetAsync(instance.workspace.get(), 0, instance.workspace.bytes(),
                                   instance.stream));
      args.d = instance.d.get();
      args.workspace = instance.workspace.get();
      gemm::launch_planned(*instance.lesson, args, instance.plan, instance.stream);
      CUDA_CHECK(cudaGetLastError());
    }
  for (size_t i = 0; i < instances.size(); ++i) {
    Instance& instance = instances[i];
    ASSERT_TRUE(finished_within(instance.stream, 60.0))
        << gemm::lesson_name(*instance.lesson) << " did not finish next to another Stream-K grid "
        << "within 60 s: a deadlock";
    std::vector<bf16> output(size_t(runner.d_elements()));
    CUDA_CHECK(cudaMemcpy(output.data(), instance.d.get(), output.size() * sizeof(bf16),
                          cudaMemcpyDeviceToHost));
    EXPECT_EQ(std::memcmp(output.data(), alone[i].data(), output.size() * sizeof(bf16)), 0)
        << gemm::lesson_name(*instance.lesson) << " next to another grid computed other bits "
        << "than alone";
    CUDA_CHECK(cudaStreamDestroy(instance.stream));
  }
}

// A lesson whose workspace resets itself (lessons 14-17) is launched again and again on a workspace
// zeroed once, as a caller would: every launch must compute the same bits as the checked first
// one. A part that found a flag left over from the previous launch would read partial sums that
// are not there yet: other bits, or a hang that the ctest time limit catches.
TEST(StreamKWorkspace, ZeroedOnceServesLaunchAfterLaunch) {
  gemm::LessonRunner& runner = gpu_test_support::shared_runner();
  const std::vector<const gemm::Lesson*> lessons = runnable_lessons(
      runner, [](const gemm::Lesson& lesson) { return lesson.workspace_resets_itself; });
  if (lessons.empty()) {
    if (gpu_test_support::gpu_required()) FAIL() << "REQUIRE_GPU=1: no such lesson runs here";
    GTEST_SKIP() << "no lesson with a self-resetting workspace can run on this GPU";
  }
  constexpr int kLaunches = 8;
  // Every tile cut into parts, and a wave-quantized shape: whole tiles and parts of tiles.
  for (const gemm::GemmProblem& problem : {kStreamKShape, gemm::GemmProblem{4224, 4224, 4224}})
    for (const gemm::Lesson* lesson : lessons) {
      const std::string name = gemm::lesson_name(*lesson) + " at " + std::to_string(problem.m) +
                               " x " + std::to_string(problem.n) + " x " + std::to_string(problem.k);
      runner.set_problem(problem, /*seed=*/47);
      ASSERT_TRUE(runner.check(*lesson).passed()) << name << ": the first launch";
      const std::vector<bf16> expected = runner.download_d();

      gemm::GemmArgs args;
      args.problem = problem;
      args.a = runner.a();
      args.b = runner.b();
      args.d = runner.d();
      const gemm::LaunchPlan plan = gemm::plan_launch(*lesson, problem);
      gemm::DeviceBuffer<unsigned char> workspace(plan.workspace_bytes);
      CUDA_CHECK(cudaMemset(workspace.get(), 0, workspace.bytes()));  // once, at allocation
      args.workspace = workspace.get();
      for (int launch = 0; launch < kLaunches; ++launch) {
        CUDA_CHECK(cudaMemsetAsync(runner.d(), 0xFF, expected.size() * sizeof(bf16),
                                   runner.stream()));  // NaN: an unwritten output shows
        gemm::launch_planned(*lesson, args, plan, runner.stream());
        CUDA_CHECK(cudaGetLastError());
        ASSERT_TRUE(finished_within(runner.stream(), 60.0)) << name << ": launch " << launch
                                                            << " did not finish within 60 s";
        const std::vector<bf16> output = runner.download_d();
        ASSERT_EQ(std::memcmp(output.data(), expected.data(), output.size() * sizeof(bf16)), 0)
            << name << ": launch " << launch << " on a workspace zeroed once computed other bits";
      }
    }
}

}  // namespace
