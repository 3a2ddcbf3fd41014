// Lesson 18: fp8 with block scaling. `lesson18` checks and times one GEMM like every lesson
// (against cuBLASLt's block-scaled fp8, with its per-tensor fp8 and the quantization reported
// too); `lesson18 sweep` measures the lesson's table (README, common/fp8/fp8_sweep.hpp): every shape
// of a set, paired with cuBLASLt block-scaled, cuBLASLt per-tensor and lesson 16's bf16 kernel,
// and what fp8 costs in accuracy against lesson 16 on the same inputs; `lesson18 accuracy` what
// the promotion buys: the error against K, with and without it (common/fp8/fp8_accuracy.hpp).
#include <cstring>

#include "common/fp8/fp8_accuracy.hpp"
#include "common/fp8/fp8_sweep.hpp"
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) {
  const gemm::Lesson& lesson = gemm::lessons::lesson18();
  if (argc > 1 && std::strcmp(argv[1], "sweep") == 0)
    return gemm::run_fp8_sweep_command(lesson, gemm::lessons::lesson16(), argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "accuracy") == 0)
    return gemm::run_fp8_accuracy_command(lesson, argc, argv);
  return gemm::run_lesson(lesson, argc, argv);
}
