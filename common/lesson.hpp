#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

#include <cuda_runtime_api.h>

#include "common/exercise.hpp"  // the stub of an exercise region a hand-out leaves to write
#include "common/gemm.hpp"
#include "common/schedule/kernel_shape.hpp"
#include "common/schedule/stream_k.hpp"
#include "common/workloads/kinds.hpp"

namespace gemm {

// The compute capability a lesson needs.
enum class MinArch {
  sm80,   // mma.sync, ldmatrix, cp.async: any GPU from Ampere on (lessons 01-06)
  sm90a,  // wgmma, TMA, setmaxnreg: Hopper's arch-specific target, compute capability 9.0 only
};

// One compiled configuration of a lesson that has several (lessons 16-18): its name and what the
// cost model knows of it.
struct Configuration {
  const char* name;  // e.g. "128x256_c2_sk8"
  KernelShape shape;
};

// What a lesson decides for a problem, once: which of its configurations runs (lessons 16-18),
// the schedule of its persistent grid (15 on), and the workspace it needs. The harness takes this
// one value to size the workspace, to launch, to check the flags and to report, so that they
// cannot disagree.
struct LaunchPlan {
  int configuration = -1;  // an index of Lesson::configurations; -1 for a lesson with one
  StreamKPlan schedule{};
  size_t workspace_bytes = 0;       // what the launch needs, and of it ...
  size_t workspace_flag_bytes = 0;  // ... the leading flags every launch leaves zero (Stream-K)
};

// Everything the harness, the tests, the benchmark and the grader need to know about a lesson: its
// entry, gemm::lessons::lessonNN() (lessons/registry.hpp). Its kernel.cuh defines what the kernel
// offers (lessonNN::kLesson: the launch, the workspace, ...); the lesson's description says the
// rest (LessonDescription, below), and lessons/CMakeLists.txt writes the two into the entry.
struct Lesson {
  // Described (LessonDescription): kLesson leaves these four, fused_epilogue and workload unset.
  int id = 0;                   // 1..18
  int parent = 0;               // the lesson whose kernel this one starts from; 0 for lesson 01
  const char* slug = nullptr;   // folder name without the number, e.g. "smem_tiling"
  const char* title = nullptr;  // one line: what the lesson adds
  MinArch min_arch;
  // The workspace must be all zeros when a launch starts (Stream-K's flags): the harness zeroes it
  // before every launch, outside every timed region ...
  bool zeroed_workspace = false;
  // ... unless the lesson leaves it zeroed itself (lesson 15: the last part of a tile resets the
  // tile's flag). Then the harness zeroes it only when it allocates it or something else has
  // written into it, and every launch a caller makes costs what the timing measures.
  bool workspace_resets_itself = false;
  // Described: the lesson computes lesson 15's fused epilogue (alpha, beta * C, bias, activation).
  // Lessons without it are only ever handed the plain product (Epilogue::is_plain()).
  bool fused_epilogue = false;
  // How every lesson launches: it decides its launch once per problem (plan; `configuration` >= 0
  // forces that configuration, -1 lets the lesson choose) and launches on what it decided
  // (launch_planned). The plan says how much workspace the launch needs and, of a workspace that
  // resets itself, the leading bytes each launch must leave zero (Stream-K's flags), which the
  // check reads after the launch. A lesson with one launch (01-14) plans through OneLaunch, below;
  // the final kernel's lessons (15 on) through their configurations.
  LaunchPlan (*plan)(const GemmProblem& problem, int configuration) = nullptr;
  void (*launch_planned)(const GemmArgs& args, const LaunchPlan& plan, cudaStream_t stream) = nullptr;
  // The lesson's compiled configurations, if it has several (lesson 16): its plan chooses one per
  // problem, and `--config NAME` runs one of them instead.
  const Configuration* configurations = nullptr;
  int configuration_count = 0;
  int forced_configuration = -1;  // >= 0: this entry runs that configuration alone (below)
  // The lesson's kernel is launched as a dependent of the kernel ahead of it in the stream, and
  // waits for it on the device (lesson 17): the check makes its inputs arrive late (runner.hpp).
  bool waits_for_prerequisite = false;
  // Described: what the lesson multiplies (lesson.json's "operands"), the kind of workload that
  // owns its inputs, its shape contract, its check and its references
  // (common/workloads/workload.hpp): the course's bf16 A and B, or lesson 18's block-scaled e4m3.
  const WorkloadKind* workload = &workloads::kind_bf16;
};

// What the course says of a lesson without building it, in one place that the build and the tools
// (the grader, the hand-out tool, `make diff`) all read: the number and slug from the name of its
// folder, lessons/NN_slug/, and the rest from the folder's lesson.json:
//   {"parent": 15, "title": "...", "operands": "bf16", "fused_epilogue": true}
struct LessonDescription {
  int id;
  int parent;
  const char* slug;
  const char* title;
  const WorkloadKind* workload;  // "operands": workloads::kind_<operands>
  bool fused_epilogue;
};

// Whether a kernel's kLesson leaves every described field unset, as it must: a field set in two
// places could disagree (the entries that lessons/CMakeLists.txt writes assert it).
constexpr bool leaves_description_out(const Lesson& kernel_entry) {
  return kernel_entry.id == 0 && kernel_entry.parent == 0 && kernel_entry.slug == nullptr &&
         kernel_entry.title == nullptr && kernel_entry.workload == &workloads::kind_bf16 &&
         !kernel_entry.fused_epilogue;
}

// A lesson's entry: what its kernel offers (kLesson) with what its description says.
constexpr Lesson with_description(Lesson kernel_entry, const LessonDescription& description) {
  kernel_entry.id = description.id;
  kernel_entry.parent = description.parent;
  kernel_entry.slug = description.slug;
  kernel_entry.title = description.title;
  kernel_entry.workload = description.workload;
  kernel_entry.fused_epilogue = description.fused_epilogue;
  return kernel_entry;
}

// The lesson entry that runs configuration `index` of `lesson` alone (`--config NAME`).
inline Lesson with_configuration(const Lesson& lesson, int index) {
  Lesson forced = lesson;
  forced.forced_configuration = index;
  return forced;
}

// The plan of a lesson with one launch function (lessons 01-14): nothing to choose, the workspace
// that WorkspaceBytes asks for (none without it), of which FlagBytes are the flags each launch
// leaves zero. Its kLesson points at OneLaunch<&launch, ...>::plan and ::launch.
using LaunchFunction = void (*)(const GemmArgs& args, cudaStream_t stream);
using WorkspaceFunction = size_t (*)(const GemmProblem& problem);
template <LaunchFunction Launch, WorkspaceFunction WorkspaceBytes = nullptr,
          WorkspaceFunction FlagBytes = nullptr>
struct OneLaunch {
  static LaunchPlan plan(const GemmProblem& problem, int /*configuration*/) {
    LaunchPlan plan;
    if constexpr (WorkspaceBytes != nullptr) plan.workspace_bytes = WorkspaceBytes(problem);
    if constexpr (FlagBytes != nullptr) plan.workspace_flag_bytes = FlagBytes(problem);
    return plan;
  }
  static void launch(const GemmArgs& args, const LaunchPlan& /*plan*/, cudaStream_t stream) {
    Launch(args, stream);
  }
};

// What `lesson` runs for `problem`: its plan.
inline LaunchPlan plan_launch(const Lesson& lesson, const GemmProblem& problem) {
  return lesson.plan(problem, lesson.forced_configuration);
}

// One launch of `lesson` on what plan_launch decided.
inline void launch_planned(const Lesson& lesson, const GemmArgs& args, const LaunchPlan& plan,
                           cudaStream_t stream) {
  lesson.launch_planned(args, plan, stream);
}

// The name of the configuration that a plan of `lesson` runs; empty for a lesson with one.
inline std::string configuration_name(const Lesson& lesson, const LaunchPlan& plan) {
  return plan.configuration >= 0 ? lesson.configurations[plan.configuration].name : "";
}

// The index of the configuration called `name`, or -1.
inline int find_configuration(const Lesson& lesson, const std::string& name) {
  for (int i = 0; i < lesson.configuration_count; ++i)
    if (name == lesson.configurations[i].name) return i;
  return -1;
}

// "lesson07": the name of the executable, the ctest prefix and the kernel namespace.
inline std::string lesson_name(const Lesson& lesson) {
  char name[16];
  std::snprintf(name, sizeof(name), "lesson%02d", lesson.id);
  return name;
}

}  // namespace gemm
