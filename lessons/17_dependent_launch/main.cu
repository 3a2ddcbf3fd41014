// Lesson 17: programmatic dependent launch. `lesson17` checks and times one GEMM like every
// lesson; `lesson17 chain` runs the lesson's problem, the two-GEMM MLP chain (common/mlp/mlp_chain.hpp),
// against lesson 16's kernels in stream order.
#include <cstring>

#include "common/harness/runner.hpp"
#include "common/mlp/mlp_chain.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) {
  const gemm::Lesson& lesson = gemm::lessons::lesson17();
  if (argc > 1 && std::strcmp(argv[1], "chain") == 0)
    return gemm::run_chain_command(gemm::lessons::lesson16(), lesson, argc, argv);
  return gemm::run_lesson(lesson, argc, argv);
}
