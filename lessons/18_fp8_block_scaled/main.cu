// Lesson 18: fp8 with block scaling. `lesson18` checks and times one GEMM like every lesson
// (against cuBLASLt's block-scaled fp8, with its per-tensor fp8 and the quantization reported
// too); `lesson18 sweep` measures the lesson's table (README): every shape of a set, paired with
// cuBLASLt block-scaled, cuBLASLt per-tensor and lesson 16's bf16 kernel, and what fp8 costs in
// accuracy against lesson 16 on the same inputs.
#include <cstring>

#include "common/runner.hpp"
#include "lessons/16_shape_heuristics/kernel.cuh"
#include "lessons/18_fp8_block_scaled/kernel.cuh"
#include "lessons/18_fp8_block_scaled/sweep.hpp"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "sweep") == 0)
    return lesson18::run_sweep_command(lesson18::kLesson, lesson16::kLesson, argc, argv);
  return gemm::run_lesson(lesson18::kLesson, argc, argv);
}
