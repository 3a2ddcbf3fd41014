// Every registered lesson on every shape of the list, against cuBLAS (fp32 output) and, where the
// shape is small, against fp64 on the CPU. Test names are "Lessons/LessonShapes.Correct/lesson07_ragged_m",
// so `ctest -R lesson07` (or --gtest_filter=*/lesson07_*) runs one lesson.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "lessons/registry.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace {

using gemm::GemmProblem;
using gemm::Lesson;

struct Shape {
  const char* name;
  GemmProblem problem;
};

// Tile multiples, ragged M / N / K (sizes that are not multiples of any tile), the smallest shapes
// the contract allows, skinny ones, fewer tiles than SMs (persistent grids), one large problem,
// and an A too large for 32-bit offsets.
const std::vector<Shape> kShapes = {
    {"tile_multiple", {256, 256, 256}},
    {"tile_multiple_deep", {256, 512, 1024}},
    {"ragged_m", {200, 256, 128}},
    {"ragged_n", {256, 200, 128}},
    {"ragged_k", {256, 256, 200}},
    {"ragged_all", {333, 136, 264}},
    {"ragged_odd_small", {17, 24, 40}},
    {"tiny", {1, 8, 8}},
    {"m_1", {1, 512, 256}},
    {"n_8", {384, 8, 256}},
    {"k_8", {256, 384, 8}},
    {"skinny_m", {8, 4096, 512}},
    {"skinny_n", {4096, 16, 512}},
    {"deep_k", {64, 128, 8192}},
    {"square_1000", {1000, 1000, 1000}},
    {"fewer_tiles_than_sms", {384, 768, 2048}},
    {"large_4096", {4096, 4096, 4096}},
    // A has more than 2^31 elements (4.3 GB): every offset into it needs 64 bits.
    {"a_over_2g_elements", {524288, 128, 4104}},
};

using Case = std::tuple<int, size_t>;  // (lesson id, index into kShapes)

class LessonShapes : public testing::TestWithParam<Case> {};

TEST_P(LessonShapes, Correct) {
  const Lesson& lesson = *gemm::find_lesson(std::get<0>(GetParam()));
  const Shape& shape = kShapes[std::get<1>(GetParam())];
  gemm::LessonRunner& runner = gpu_test_support::shared_runner();
  if (const auto reason = gemm::unsupported_reason(lesson, runner.device())) {
    if (gpu_test_support::gpu_required()) FAIL() << "REQUIRE_GPU=1: " << *reason;
    GTEST_SKIP() << *reason;
  }

  // Fresh random inputs for each case (the seed follows the shape), output poisoned before the run.
  runner.set_problem(shape.problem, /*seed=*/1000 + std::get<1>(GetParam()));
  const gemm::CheckResult first = runner.check(lesson);
  EXPECT_TRUE(first.against_cublas.passed())
      << "vs cuBLAS: " << first.against_cublas.summary(shape.problem.n);
  if (first.against_cpu)
    EXPECT_TRUE(first.against_cpu->passed())
        << "vs fp64 CPU: " << first.against_cpu->summary(shape.problem.n);

  // The same inputs must give the same bits every time: a difference is a race.
  const std::vector<gemm::bf16> first_output = runner.download_d();
  runner.check(lesson);
  const std::vector<gemm::bf16> second_output = runner.download_d();
  EXPECT_EQ(std::memcmp(first_output.data(), second_output.data(),
                        first_output.size() * sizeof(gemm::bf16)),
            0)
      << "two runs on the same inputs gave different outputs";
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const Lesson& lesson : gemm::all_lessons())
    for (size_t shape = 0; shape < kShapes.size(); ++shape) cases.emplace_back(lesson.id, shape);
  return cases;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  return gemm::lesson_name(*gemm::find_lesson(std::get<0>(info.param))) + "_" +
         kShapes[std::get<1>(info.param)].name;
}

INSTANTIATE_TEST_SUITE_P(Lessons, LessonShapes, testing::ValuesIn(all_cases()), case_name);

}  // namespace
