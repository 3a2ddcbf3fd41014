// Lesson 15's epilogue loader (C and the bias brought by TMA) in the cases that the runner's
// problems do not make: C that is D itself (a residual connection computed in place), in every
// compiled configuration of lesson 16, and a C of more than 2^31 elements.
//
// C is D: each tile's C must be read before that tile's D overwrites it. The loader reads a
// subtile of C into the buffer that the same subtile of D is then staged in, and only the tile's
// own stores write its part of D, so the order holds by construction; these tests are where a
// change that broke it would show.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/harness/random.hpp"
#include "common/harness/verify.hpp"
#include "common/references/epilogue_reference.hpp"
#include "lessons/registry.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace {

using gemm::bf16;
using gemm::GemmProblem;

constexpr int64_t kGuard = 256;  // poisoned elements after D: none may be written

struct Result {
  gemm::VerifyReport report;
  std::string what;
};

// The epilogue's operands besides alpha, beta and the activation.
struct Inputs {
  bool bias;    // a random bias, or none
  bool c_is_d;  // C at D itself, or in a buffer of its own
};

// D = act(alpha * A * B^T + beta * C + bias) by `lesson`, checked against cuBLASLt (fp32 output)
// computed from the same C beforehand.
Result run_and_check(const gemm::Lesson& lesson, const GemmProblem& p, gemm::Epilogue epilogue,
                     Inputs inputs, uint64_t seed) {
  const int64_t mn = p.m * p.n;
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreate(&stream));
  gemm::DeviceBuffer<bf16> a{size_t(p.m * p.k)}, b{size_t(p.n * p.k)}, bias{size_t(p.n)};
  gemm::DeviceBuffer<bf16> c{size_t(mn)}, d{size_t(mn + kGuard)};
  gemm::DeviceBuffer<float> reference{size_t(mn)};
  gemm::fill_uniform(a.get(), a.size(), seed, stream);
  gemm::fill_uniform(b.get(), b.size(), seed + 1, stream);
  gemm::fill_uniform(c.get(), c.size(), seed + 2, stream);
  gemm::fill_uniform(bias.get(), bias.size(), seed + 3, stream);
  epilogue.bias = inputs.bias ? bias.get() : nullptr;

  epilogue.c = c.get();
  gemm::EpilogueReference library;
  library.run(p, a.get(), b.get(), epilogue, reference.get(), CUDA_R_32F, stream);

  gemm::poison(d.get(), d.size(), stream);
  if (inputs.c_is_d) {
    CUDA_CHECK(cudaMemcpyAsync(d.get(), c.get(), size_t(mn) * sizeof(bf16), cudaMemcpyDeviceToDevice,
                               stream));
    epilogue.c = d.get();
  }
  const gemm::LaunchPlan plan = gemm::plan_launch(lesson, p);
  const size_t workspace_bytes = plan.workspace_bytes;
  gemm::DeviceBuffer<unsigned char> workspace{workspace_bytes};
  if (workspace_bytes > 0) CUDA_CHECK(cudaMemsetAsync(workspace.get(), 0, workspace_bytes, stream));
  gemm::GemmArgs args;
  args.problem = p;
  args.a = a.get();
  args.b = b.get();
  args.d = d.get();
  args.workspace = workspace_bytes > 0 ? workspace.get() : nullptr;
  args.epilogue = epilogue;
  gemm::launch_planned(lesson, args, plan, stream);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(stream));
  Result result{gemm::verify_on_device(d.get(), reference.get(), mn, d.get() + mn, kGuard, stream),
                std::to_string(p.m) + " x " + std::to_string(p.n) + " x " + std::to_string(p.k)};
  CUDA_CHECK(cudaStreamDestroy(stream));
  return result;
}

bool skip_without_gpu(const gemm::Lesson& lesson) {
  gemm::LessonRunner& runner = gpu_test_support::shared_runner();
  return gemm::unsupported_reason(lesson, runner.device()).has_value();
}

gemm::Epilogue residual() {  // D = A * B^T + C
  gemm::Epilogue epilogue;
  epilogue.beta = 1.0f;
  return epilogue;
}

gemm::Epilogue gelu_of_all() {  // D = gelu(1.5 A * B^T - 0.5 C + bias), with a bias
  gemm::Epilogue epilogue;
  epilogue.alpha = 1.5f;
  epilogue.beta = -0.5f;
  epilogue.activation = gemm::Activation::gelu;
  return epilogue;
}

// Ragged, tiny, and one whose tiles Stream-K cuts into parts (only the last part stores).
const std::vector<GemmProblem> kAliasShapes = {{333, 136, 264}, {1, 8, 8}, {1024, 1024, 16384}};

// Each lesson with the fused epilogue (for lesson 16, each of its configurations), on each shape,
// with C at D: the residual alone and with everything else.
TEST(EpilogueInputs, CAliasedToDInEveryConfiguration) {
  for (const gemm::Lesson& base : gemm::all_lessons()) {
    if (!base.fused_epilogue) continue;
    if (skip_without_gpu(base)) {
      if (gpu_test_support::gpu_required()) FAIL() << "REQUIRE_GPU=1: no GPU for lesson " << base.id;
      GTEST_SKIP() << "no GPU that runs lesson " << base.id;
    }
    const int configurations = base.configuration_count > 0 ? base.configuration_count : 1;
    for (int configuration = 0; configuration < configurations; ++configuration) {
      const gemm::Lesson lesson = base.configuration_count > 0
                                      ? gemm::with_configuration(base, configuration)
                                      : base;
      const std::string name =
          "lesson " + std::to_string(base.id) +
          (base.configuration_count > 0
               ? std::string(" ") + base.configurations[configuration].name
               : std::string());
      uint64_t seed = 40;
      for (const GemmProblem& p : kAliasShapes)
        for (const bool all : {false, true}) {
          const Result result = run_and_check(lesson, p, all ? gelu_of_all() : residual(),
                                              Inputs{.bias = all, .c_is_d = true}, seed += 4);
          EXPECT_TRUE(result.report.passed())
              << name << ", " << result.what << ", C at D: " << result.report.summary(p.n);
        }
    }
  }
}

// C, and so D, of more than 2^31 elements: every offset into them needs 64 bits. Lesson 16 picks
// its configuration; lesson 15 runs its own.
TEST(EpilogueInputs, COfMoreThan2GElements) {
  const GemmProblem p{66000, 32768, 64};  // 2.16e9 elements of C and of D
  static_assert(int64_t(66000) * 32768 > (int64_t(1) << 31));
  for (const int id : {15, 16}) {
    const gemm::Lesson& lesson = *gemm::find_lesson(id);
    if (skip_without_gpu(lesson)) {
      if (gpu_test_support::gpu_required()) FAIL() << "REQUIRE_GPU=1: no GPU for lesson " << id;
      GTEST_SKIP() << "no GPU that runs lesson " << id;
    }
    const Result result =
        run_and_check(lesson, p, gelu_of_all(), Inputs{.bias = true, .c_is_d = false}, 7);
    EXPECT_TRUE(result.report.passed()) << "lesson " << id << ", " << result.what << ": "
                                        << result.report.summary(p.n);
  }
}

}  // namespace
