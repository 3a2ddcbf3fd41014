// Every registered lesson on every shape of the list, against cuBLAS (fp32 output) and, where the
// shape is small, against fp64 on the CPU. Test names are "Lessons/LessonShapes.Correct/lesson07_ragged_m",
// so `ctest -R lesson07` (or --gtest_filter=*/lesson07_*) runs one lesson.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
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
    // The smallest K of lesson 18's contract (K % 16 == 0), and a K that ends in part of a
    // 128-wide scale block, alone and with ragged M and N.
    {"k_16", {200, 136, 16}},
    {"ragged_k_scale_block", {256, 256, 208}},
    {"ragged_all_k_16", {333, 136, 272}},
    {"skinny_m", {8, 4096, 512}},
    {"skinny_n", {4096, 16, 512}},
    {"deep_k", {64, 128, 8192}},
    {"square_1000", {1000, 1000, 1000}},
    {"fewer_tiles_than_sms", {384, 768, 2048}},
    // More tiles than the SMs with one k-iteration each: every block of a persistent grid takes
    // two or three tiles, so the epilogue's rings (the bias slices, C's slots) go round.
    {"many_tiles_short_k", {2304, 2304, 64}},
    // Wave-quantized (lesson 14 cuts the last wave along K); every tile cut into parts.
    {"wave_quantized_4224", {4224, 4224, 4224}},
    {"every_tile_split", {256, 512, 65536}},
    {"few_tiles_long_k", {1024, 1024, 16384}},
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
  if (!gpu_test_support::runs_here(lesson)) return;

  // A kind of workload may have a contract of its own (lesson 18's asks for K % 16 == 0): the
  // shapes outside it are not its lessons' to run.
  if (const auto violation = lesson.workload->contract_violation(shape.problem))
    GTEST_SKIP() << "outside the " << lesson.workload->name << " shape contract: " << *violation;

  // Fresh random inputs for each case (the seed follows the shape), output poisoned before the run.
  runner.set_problem(shape.problem, /*seed=*/1000 + std::get<1>(GetParam()), {}, *lesson.workload);
  const gemm::CheckResult first = runner.check(lesson);
  EXPECT_TRUE(first.against_cublas.passed())
      << "vs cuBLAS: " << first.against_cublas.summary(shape.problem.n);
  if (first.against_cpu) {
    EXPECT_TRUE(first.against_cpu->passed())
        << "vs fp64 CPU: " << first.against_cpu->summary(shape.problem.n);
  }

  // The same inputs must give the same bits every time: a difference is a race (or, for Stream-K,
  // a summation order that depends on timing).
  const std::vector<gemm::bf16> first_output = runner.download_d();
  // A lesson with a workspace must not depend on what was left in it: fill it with garbage first
  // (the harness zeroes it again where it must start zeroed). A workspace that resets itself gets
  // nothing between the two runs: what the first run left must serve the second.
  if (gemm::plan_launch(lesson, shape.problem).workspace_bytes > 0 && !lesson.workspace_resets_itself)
    runner.fill_workspace(lesson, 0xA5);
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

// ---- Lesson 15's fused epilogue: D = act(alpha * A * B^T + beta * C + bias) -------------------

struct EpilogueCase {
  const char* name;
  gemm::EpilogueOptions options;
};

gemm::EpilogueOptions epilogue(float alpha, float beta, bool bias, gemm::Activation activation) {
  gemm::EpilogueOptions options;
  options.alpha = alpha;
  options.beta = beta;
  options.bias = bias;
  options.activation = activation;
  options.given = true;
  return options;
}

// Each activation, with and without bias and C (C with each of them); alpha alone.
const std::vector<EpilogueCase> kEpilogues = {
    {"alpha", epilogue(1.5f, 0.0f, false, gemm::Activation::none)},
    {"beta_c", epilogue(1.0f, 0.5f, false, gemm::Activation::none)},
    {"bias", epilogue(1.0f, 0.0f, true, gemm::Activation::none)},
    {"bias_relu", epilogue(1.0f, 0.0f, true, gemm::Activation::relu)},
    {"beta_relu", epilogue(1.0f, -0.75f, false, gemm::Activation::relu)},
    {"bias_gelu", epilogue(1.0f, 0.0f, true, gemm::Activation::gelu)},
    {"all_gelu", epilogue(1.5f, 0.5f, true, gemm::Activation::gelu)},
    {"silu", epilogue(1.0f, 0.0f, false, gemm::Activation::silu)},
    {"all_silu", epilogue(0.75f, -0.5f, true, gemm::Activation::silu)},
};
// Ragged, tiny and tile-multiple shapes, and one whose tiles Stream-K cuts into parts.
const std::vector<std::string> kEpilogueShapes = {"tile_multiple", "ragged_all", "ragged_odd_small",
                                                  "tiny", "square_1000", "few_tiles_long_k"};

size_t shape_index(const std::string& name) {
  for (size_t i = 0; i < kShapes.size(); ++i)
    if (name == kShapes[i].name) return i;
  throw std::invalid_argument("no shape named " + name);
}

using EpilogueParam = std::tuple<int, size_t, size_t>;  // (lesson id, epilogue, shape index)

// The lesson on the runner's problem: against the reference (and fp64 on the CPU where the shape
// is small), then once more on the same inputs, which must give the same bits.
void expect_correct_and_repeatable(gemm::LessonRunner& runner, const Lesson& lesson,
                                   const GemmProblem& problem) {
  const gemm::CheckResult result = runner.check(lesson);
  EXPECT_TRUE(result.against_cublas.passed())
      << "vs " << runner.reference_name(lesson) << ": " << result.against_cublas.summary(problem.n);
  if (result.against_cpu) {
    EXPECT_TRUE(result.against_cpu->passed())
        << "vs fp64 CPU: " << result.against_cpu->summary(problem.n);
  }
  runner.check(lesson);
  EXPECT_EQ(runner.verify_current_output(*lesson.workload).output_hash, result.output_hash)
      << "two runs on the same inputs gave different outputs";
}

class LessonEpilogues : public testing::TestWithParam<EpilogueParam> {};

TEST_P(LessonEpilogues, Correct) {
  const Lesson& lesson = *gemm::find_lesson(std::get<0>(GetParam()));
  const EpilogueCase& epilogue_case = kEpilogues[std::get<1>(GetParam())];
  const Shape& shape = kShapes[std::get<2>(GetParam())];
  gemm::LessonRunner& runner = gpu_test_support::shared_runner();
  if (!gpu_test_support::runs_here(lesson)) return;
  runner.set_problem(shape.problem, /*seed=*/2000 + std::get<1>(GetParam()), epilogue_case.options);
  expect_correct_and_repeatable(runner, lesson, shape.problem);
}

std::vector<EpilogueParam> epilogue_cases() {
  std::vector<EpilogueParam> cases;
  for (const Lesson& lesson : gemm::all_lessons())
    if (lesson.fused_epilogue)
      for (size_t epilogue = 0; epilogue < kEpilogues.size(); ++epilogue)
        for (const std::string& shape : kEpilogueShapes)
          cases.emplace_back(lesson.id, epilogue, shape_index(shape));
  return cases;
}

std::string epilogue_case_name(const testing::TestParamInfo<EpilogueParam>& info) {
  return gemm::lesson_name(*gemm::find_lesson(std::get<0>(info.param))) + "_" +
         kEpilogues[std::get<1>(info.param)].name + "_" + kShapes[std::get<2>(info.param)].name;
}

INSTANTIATE_TEST_SUITE_P(Lessons, LessonEpilogues, testing::ValuesIn(epilogue_cases()),
                         epilogue_case_name);

// ---- Lesson 16: every compiled configuration, whichever the cost model would choose ------------

// Ragged and tiny shapes, fewer tiles than SMs, wave-quantized and split ones: each configuration
// on each (the model's choice runs on the whole list above), plain and with fused epilogues (a
// decode step's among them: the swapped operands' C and bias, 8 tokens).
// (Lesson 18's configurations: the plain product, on the shapes its contract takes, and two more
// whose N make a 192-wide tile reach into a second block of B's scales, or past N.)
const std::vector<std::string> kConfigurationShapes = {
    "ragged_all", "ragged_odd_small", "tiny", "n_8", "skinny_m", "fewer_tiles_than_sms",
    "wave_quantized_4224", "every_tile_split", "few_tiles_long_k", "ragged_all_k_16",
    "k_16", "ragged_k_scale_block"};
const std::vector<std::pair<std::string, std::string>> kConfigurationEpilogues = {
    {"all_gelu", "ragged_all"}, {"beta_c", "few_tiles_long_k"}, {"all_silu", "every_tile_split"},
    {"all_gelu", "many_tiles_short_k"}, {"all_gelu", "skinny_m"}};
// Lesson 17 runs lesson 16's configurations with another launch policy (two instructions in the
// producer thread, common/hopper/launch_policy.hpp): each configuration on a ragged shape, a
// Stream-K one and a split one, with late inputs (the check of a dependent launch), and fused.
const std::vector<std::string> kDependentConfigurationShapes = {"ragged_all", "wave_quantized_4224",
                                                                "every_tile_split"};
const std::vector<std::pair<std::string, std::string>> kDependentConfigurationEpilogues = {
    {"all_gelu", "ragged_all"}, {"all_gelu", "many_tiles_short_k"}};

// (lesson id, configuration, shape index, epilogue index or -1 for the plain product)
using ConfigurationParam = std::tuple<int, int, size_t, int>;

class LessonConfigurations : public testing::TestWithParam<ConfigurationParam> {};

TEST_P(LessonConfigurations, Correct) {
  const auto [lesson_id, configuration, shape_id, epilogue_id] = GetParam();
  const Lesson lesson = gemm::with_configuration(*gemm::find_lesson(lesson_id), configuration);
  const Shape& shape = kShapes[shape_id];
  gemm::LessonRunner& runner = gpu_test_support::shared_runner();
  if (!gpu_test_support::runs_here(lesson)) return;
  const gemm::EpilogueOptions options =
      epilogue_id < 0 ? gemm::EpilogueOptions{} : kEpilogues[size_t(epilogue_id)].options;
  runner.set_problem(shape.problem, /*seed=*/3000 + shape_id, options, *lesson.workload);
  expect_correct_and_repeatable(runner, lesson, shape.problem);
}

int epilogue_index(const std::string& name) {
  for (size_t i = 0; i < kEpilogues.size(); ++i)
    if (name == kEpilogues[i].name) return int(i);
  throw std::invalid_argument("no epilogue named " + name);
}

std::vector<ConfigurationParam> configuration_cases() {
  std::vector<ConfigurationParam> cases;
  for (const Lesson& lesson : gemm::all_lessons())
    for (int configuration = 0; configuration < lesson.configuration_count; ++configuration) {
      const bool dependent = lesson.waits_for_prerequisite;
      for (const std::string& shape :
           dependent ? kDependentConfigurationShapes : kConfigurationShapes) {
        if (lesson.workload->contract_violation(kShapes[shape_index(shape)].problem)) continue;
        cases.emplace_back(lesson.id, configuration, shape_index(shape), -1);
      }
      if (lesson.fused_epilogue)
        for (const auto& [epilogue, shape] :
             dependent ? kDependentConfigurationEpilogues : kConfigurationEpilogues)
          cases.emplace_back(lesson.id, configuration, shape_index(shape), epilogue_index(epilogue));
    }
  return cases;
}

std::string configuration_case_name(const testing::TestParamInfo<ConfigurationParam>& info) {
  const auto [lesson_id, configuration, shape_id, epilogue_id] = info.param;
  const Lesson& lesson = *gemm::find_lesson(lesson_id);
  return gemm::lesson_name(lesson) + "_config_" + lesson.configurations[configuration].name + "_" +
         (epilogue_id < 0 ? std::string("plain") : kEpilogues[size_t(epilogue_id)].name) + "_" +
         kShapes[shape_id].name;
}

INSTANTIATE_TEST_SUITE_P(Lessons, LessonConfigurations, testing::ValuesIn(configuration_cases()),
                         configuration_case_name);

}  // namespace
