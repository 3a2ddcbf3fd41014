// Lesson 17: programmatic dependent launch. `lesson17` checks and times one GEMM like every
// lesson; `lesson17 chain` runs the lesson's problem, the two-GEMM MLP chain (chain.cuh).
#include <cstring>

#include "common/runner.hpp"
#include "lessons/17_dependent_launch/chain.cuh"
#include "lessons/17_dependent_launch/kernel.cuh"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "chain") == 0) return lesson17::run_chain_command(argc, argv);
  return gemm::run_lesson(lesson17::kLesson, argc, argv);
}
