// Runs the lesson executables the way a student does and checks what they print and return for
// bad command lines and (on a machine without one) for a missing GPU. Nothing here needs a GPU.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <set>
#include <string>

#include <cuda_runtime_api.h>

#include "common/harness/runner.hpp"
#include "common/workloads/kinds.hpp"
#include "common/workloads/workload.hpp"
#include "lessons/registry.hpp"

namespace {

struct ProcessResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

ProcessResult run(const std::string& executable, const std::string& arguments) {
  ProcessResult result;
  const std::string command = "'" + executable + "' " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  size_t read = 0;
  while ((read = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, read);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

int count_lines(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

bool has_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// Each bad command line: one line naming the problem, exit code 4, before touching the GPU.
void expect_rejected(const std::string& arguments, const std::string& message) {
  const ProcessResult result = run(LESSON01_EXECUTABLE, arguments);
  EXPECT_EQ(result.exit_code, gemm::kExitBadUsage) << arguments << "\n" << result.output;
  EXPECT_EQ(count_lines(result.output), 1) << result.output;
  EXPECT_NE(result.output.find("lesson01: error: " + message), std::string::npos)
      << "expected '" << message << "' in: " << result.output;
}

}  // namespace

TEST(LessonExecutable, RejectsShapesOutsideTheContract) {
  expect_rejected("--n 12", "N = 12 is not a multiple of 8");
  expect_rejected("--k 4", "K = 4 is too small");
  expect_rejected("--m 0", "M = 0 is too small");
  expect_rejected("--m 64 --n 64 --k 100", "K = 100 is not a multiple of 8");
}

TEST(LessonExecutable, RejectsBadFlags) {
  expect_rejected("--bogus", "unknown option '--bogus' (see --help)");
  expect_rejected("--m", "--m needs a value");
  expect_rejected("--m abc", "--m needs an integer, got 'abc'");
  expect_rejected("--format xml", "--format must be table, csv or json");
  expect_rejected("--iters 0", "--iters = 0 is out of range");
}

TEST(LessonExecutable, LessonsWithoutTheFusedEpilogueRefuseItsFlags) {
  // Checked before anything touches the GPU: the same line with or without one.
  const std::string refusal =
      "--alpha, --beta, --bias and --act belong to lesson 15's fused epilogue; lesson01 computes "
      "the plain D = A * B^T";
  expect_rejected("--bias", refusal);
  expect_rejected("--act relu --beta 0.5", refusal);
}

TEST(LessonExecutable, LessonsWithOneConfigurationRefuseConfig) {
  expect_rejected("--config 64x128_c1_sk2",
                  "--config chooses one of the compiled configurations of lessons 16-18; lesson01 "
                  "has one");
  expect_rejected("--config", "--config needs a value");
}

TEST(LessonExecutable, DescribesItselfWithoutAGpu) {
  const ProcessResult result = run(LESSON01_EXECUTABLE, "--describe");
  EXPECT_EQ(result.exit_code, gemm::kExitPass) << result.output;
  EXPECT_EQ(result.output,
            "{\"lesson\": 1, \"slug\": \"naive\", \"operands\": \"bf16\", \"k_multiple\": 8, "
            "\"dense_flop_per_clock_per_sm\": 4096, \"fused_epilogue\": false, "
            "\"configurations\": []}\n");
}

TEST(LessonDescription, NamesEveryConfigurationAndTheKindOfOperands) {
  for (const gemm::Lesson& lesson : gemm::all_lessons()) {
    const std::string description = gemm::describe_lesson(lesson);
    EXPECT_NE(description.find("\"operands\": \"" + std::string(lesson.workload->name) + "\""),
              std::string::npos)
        << description;
    for (int c = 0; c < lesson.configuration_count; ++c)
      EXPECT_NE(description.find("\"" + std::string(lesson.configurations[c].name) + "\""),
                std::string::npos)
          << description;
  }
}

// The K multiple a kind tells the tools is the one its contract asks for: K = k_multiple passes,
// and the multiple of 8 between it and the next one (when there is one) does not.
TEST(WorkloadKinds, KMultipleIsTheContracts) {
  for (const gemm::WorkloadKind* kind :
       {&gemm::workloads::kind_bf16, &gemm::workloads::kind_e4m3_block_scaled}) {
    EXPECT_FALSE(kind->contract_violation({64, 64, kind->k_multiple}).has_value()) << kind->name;
    EXPECT_FALSE(kind->contract_violation({64, 64, 3 * kind->k_multiple}).has_value()) << kind->name;
    if (kind->k_multiple > 8) {
      EXPECT_TRUE(kind->contract_violation({64, 64, kind->k_multiple + 8}).has_value())
          << kind->name;
    }
    EXPECT_GE(kind->dense_flop_per_clock_per_sm, 4096) << kind->name;
  }
}

TEST(LessonConfigurations, AnUnknownNameListsTheConfigurations) {
  for (const gemm::Lesson& lesson : gemm::all_lessons()) {
    if (lesson.configuration_count == 0) continue;
    const auto refusal = gemm::configuration_refusal(lesson, "no_such_configuration");
    ASSERT_TRUE(refusal.has_value());
    for (int c = 0; c < lesson.configuration_count; ++c)
      EXPECT_NE(refusal->find(lesson.configurations[c].name), std::string::npos) << *refusal;
    EXPECT_FALSE(gemm::configuration_refusal(lesson, lesson.configurations[0].name).has_value());
    // A forced configuration is what the lesson's plan is told; the plan's configuration is what
    // the report names.
    const gemm::Lesson forced = gemm::with_configuration(lesson, lesson.configuration_count - 1);
    EXPECT_EQ(forced.forced_configuration, lesson.configuration_count - 1);
    gemm::LaunchPlan plan;
    plan.configuration = forced.forced_configuration;
    EXPECT_EQ(gemm::configuration_name(forced, plan),
              lesson.configurations[lesson.configuration_count - 1].name);
  }
}

#ifdef LESSON18_EXECUTABLE
// Lesson 18's own commands (`lesson18 sweep`, `lesson18 accuracy`): a bad command line gets the
// problem and the usage, exit code 4, before touching the GPU.
TEST(LessonExecutable, Lesson18CommandsRejectBadCommandLines) {
  const struct {
    const char* arguments;
    const char* message;
  } cases[] = {
      {"sweep --bogus 1", "lesson18 sweep: error: unknown flag --bogus"},
      {"accuracy --bogus 1", "lesson18 accuracy: error: unknown flag --bogus"},
      {"accuracy --ks 256,100", "lesson18 accuracy: error: K = 100 is not a multiple of 8"},
      {"accuracy --m 0", "lesson18 accuracy: error: --m = 0 is out of range"},
  };
  for (const auto& bad : cases) {
    const ProcessResult result = run(LESSON18_EXECUTABLE, bad.arguments);
    EXPECT_EQ(result.exit_code, gemm::kExitBadUsage) << bad.arguments << "\n" << result.output;
    EXPECT_EQ(result.output.rfind(bad.message, 0), 0u)
        << "expected '" << bad.message << "' first in: " << result.output;
    EXPECT_NE(result.output.find("usage: lesson18 "), std::string::npos) << result.output;
  }
}
#endif

TEST(LessonExecutable, HelpExitsZero) {
  const ProcessResult result = run(LESSON02_EXECUTABLE, "--help");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.output.find("usage: lesson02"), std::string::npos) << result.output;
}

TEST(LessonExecutable, WithoutAGpuSaysSoInOneLineAndExits2) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU; the GPU tests cover the run itself";
  const ProcessResult result = run(LESSON01_EXECUTABLE, "--m 64 --n 64 --k 64");
  EXPECT_EQ(result.exit_code, gemm::kExitNoGpu) << result.output;
  EXPECT_EQ(count_lines(result.output), 1) << result.output;
  EXPECT_EQ(result.output.rfind("lesson01: error: no CUDA GPU found", 0), 0u) << result.output;
}

TEST(LessonExecutable, WithAGpuPassesASmallRaggedProblem) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA GPU on this machine";
  const ProcessResult result =
      run(LESSON02_EXECUTABLE, "--m 200 --n 136 --k 72 --iters 2 --warmup 1 --format csv");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find(",pass,"), std::string::npos) << result.output;
}

TEST(Registry, LessonsAreNumberedInOrderWithUniqueSlugs) {
  const auto& lessons = gemm::all_lessons();
  ASSERT_FALSE(lessons.empty());
  std::set<std::string> slugs;
  for (size_t i = 0; i < lessons.size(); ++i) {
    EXPECT_EQ(lessons[i].id, int(i) + 1);
    EXPECT_TRUE(slugs.insert(lessons[i].slug).second) << lessons[i].slug;
    // One way to launch every lesson: launch_planned on its plan.
    EXPECT_NE(lessons[i].plan, nullptr) << gemm::lesson_name(lessons[i]);
    EXPECT_NE(lessons[i].launch_planned, nullptr) << gemm::lesson_name(lessons[i]);
    EXPECT_EQ(gemm::find_lesson(lessons[i].id), &lessons[i]);
    // Each lesson starts from an earlier one (make diff L=NN diffs against it); only lesson 01
    // has none. Lesson 15 adds the fused epilogue, and the supplements after it keep it. A lesson
    // with several configurations names them, uniquely, and chooses one of them.
    if (lessons[i].id == 1) {
      EXPECT_EQ(lessons[i].parent, 0);
    } else {
      EXPECT_LT(lessons[i].parent, lessons[i].id) << gemm::lesson_name(lessons[i]);
      EXPECT_NE(gemm::find_lesson(lessons[i].parent), nullptr) << gemm::lesson_name(lessons[i]);
    }
    // (Lesson 18's e4m3 operands come with the plain product.)
    const bool bf16 = lessons[i].workload == &gemm::workloads::kind_bf16;
    EXPECT_EQ(lessons[i].fused_epilogue, lessons[i].id >= 15 && bf16) << gemm::lesson_name(lessons[i]);
    EXPECT_EQ(bf16, lessons[i].id != 18) << gemm::lesson_name(lessons[i]);
    std::set<std::string> names;
    for (int c = 0; c < lessons[i].configuration_count; ++c)
      EXPECT_TRUE(names.insert(lessons[i].configurations[c].name).second)
          << gemm::lesson_name(lessons[i]) << ": " << lessons[i].configurations[c].name;
    // Only the lessons with several configurations choose one in their plan (16 on).
    if (lessons[i].configuration_count > 0) {
      EXPECT_GE(lessons[i].id, 16) << gemm::lesson_name(lessons[i]);
    }
  }
  EXPECT_EQ(gemm::find_lesson(0), nullptr);
}

// An entry is its kernel's kLesson with the lesson's description (lessons/CMakeLists.txt writes
// both into it): the described fields come from lesson.json, the others from the kernel, and a
// kLesson that sets a described field is refused (leaves_description_out, asserted by each entry).
TEST(Registry, AnEntryIsTheKernelsPartWithTheDescription) {
  constexpr gemm::Lesson kernel_entry{.min_arch = gemm::MinArch::sm90a,
                                      .zeroed_workspace = true};
  static_assert(gemm::leaves_description_out(kernel_entry));
  constexpr gemm::Lesson entry = gemm::with_description(
      kernel_entry, {.id = 7,
                     .parent = 6,
                     .slug = "seventh",
                     .title = "a title",
                     .workload = &gemm::workloads::kind_e4m3_block_scaled,
                     .fused_epilogue = true});
  EXPECT_EQ(entry.id, 7);
  EXPECT_EQ(entry.parent, 6);
  EXPECT_STREQ(entry.slug, "seventh");
  EXPECT_STREQ(entry.title, "a title");
  EXPECT_EQ(entry.workload, &gemm::workloads::kind_e4m3_block_scaled);
  EXPECT_TRUE(entry.fused_epilogue);
  EXPECT_EQ(entry.min_arch, gemm::MinArch::sm90a);
  EXPECT_TRUE(entry.zeroed_workspace);
  EXPECT_FALSE(gemm::leaves_description_out(entry));
  gemm::Lesson sets_a_title = kernel_entry;
  sets_a_title.title = "a title of its own";
  EXPECT_FALSE(gemm::leaves_description_out(sets_a_title));
  for (const gemm::Lesson& lesson : gemm::all_lessons()) {
    ASSERT_NE(lesson.slug, nullptr) << gemm::lesson_name(lesson);
    ASSERT_NE(lesson.title, nullptr) << gemm::lesson_name(lesson);
    EXPECT_GT(std::string(lesson.title).size(), 0u) << gemm::lesson_name(lesson);
  }
}

// The check launches a lesson on other inputs first wherever a kernel could get the checked
// launch right by chance: a workspace zeroed once, which a fixup that forgets to reset its flags
// leaves stale, passes on the same inputs (the stale partial sums are the right ones); and a kernel
// that waits for its prerequisite gets its inputs late. Stream-K's lessons (14 on) reset their
// workspace themselves (lesson 18, data-parallel, has none); lesson 17 also waits.
TEST(CheckPlan, OtherInputsFirstWhereAWorkspaceResetsItselfOrInputsComeLate) {
  for (const gemm::Lesson& lesson : gemm::all_lessons()) {
    const gemm::CheckPlan plan = gemm::check_plan(lesson);
    EXPECT_EQ(plan.other_inputs_first,
              lesson.workspace_resets_itself || lesson.waits_for_prerequisite)
        << gemm::lesson_name(lesson);
    EXPECT_EQ(plan.late_inputs, lesson.waits_for_prerequisite) << gemm::lesson_name(lesson);
    EXPECT_EQ(lesson.workspace_resets_itself, lesson.id >= 14 && lesson.id != 18)
        << gemm::lesson_name(lesson);
    // Their flags are read after the checked launch: each of them declares where they are, in
    // its plan (a plan with none has nothing to read).
    EXPECT_EQ(plan.flags_checked, lesson.workspace_resets_itself) << gemm::lesson_name(lesson);
  }
  gemm::Lesson plain = gemm::all_lessons().front();
  EXPECT_FALSE(gemm::check_plan(plain).other_inputs_first);
  EXPECT_FALSE(gemm::check_plan(plain).flags_checked);
  plain.workspace_resets_itself = true;
  EXPECT_TRUE(gemm::check_plan(plain).other_inputs_first);
  EXPECT_FALSE(gemm::check_plan(plain).late_inputs);
  EXPECT_TRUE(gemm::check_plan(plain).flags_checked);
  EXPECT_EQ(gemm::plan_launch(plain, {64, 64, 64}).workspace_flag_bytes, 0u);  // none to read
}
