#pragma once
// Lesson kernels at configurations other than the ones the lessons run: the tile shapes, stage
// counts and other settings that the lessons' READMEs compare. Each variant is a gemm::Lesson
// whose launch runs the lesson's launch_tile<...> with another configuration, so it is checked
// and timed exactly like the lesson (profiles/sweep.cu).

#include <string>
#include <vector>

#include "common/lesson.hpp"

namespace sweep {

struct Variant {
  std::string group;   // the README table it belongs to, e.g. "stages_08"; one CSV per group
  std::string name;    // the configuration, e.g. "lesson08 stages=3"
  bool is_default;     // the configuration the lesson itself runs
  gemm::Lesson lesson;  // id, parent and slug of the lesson; launch of this configuration
};

// The lesson's entry with another launch function (and, for a lesson with a workspace, the
// workspace and its flags of that configuration), planned as the lesson's own (gemm::OneLaunch).
template <gemm::LaunchFunction Launch, gemm::WorkspaceFunction WorkspaceBytes = nullptr,
          gemm::WorkspaceFunction FlagBytes = nullptr>
gemm::Lesson with_launch(gemm::Lesson lesson) {
  using Planned = gemm::OneLaunch<Launch, WorkspaceBytes, FlagBytes>;
  lesson.plan = &Planned::plan;
  lesson.launch_planned = &Planned::launch;
  return lesson;
}

// The variants of each family of lessons, defined in separate files so that they compile in
// parallel (each instantiates several large kernels).
std::vector<Variant> mma_sync_variants();  // lessons 03-06 (variants_mma_sync.cu)
std::vector<Variant> hopper_variants();    // lessons 07-11 (variants_hopper.cu)
std::vector<Variant> cluster_variants();   // lessons 12-14 (variants_cluster.cu)
std::vector<Variant> tuning_variants();    // lesson 15 (variants_tuning.cu)
// Lesson 16's configurations (variants_configs.cu); the sweep's `default` column is "no" for all:
// which one the lesson runs depends on the shape (profiles/shape_model_report.cpp).
std::vector<Variant> configuration_variants();

// All of them, in order.
std::vector<Variant> all_variants();

}  // namespace sweep
