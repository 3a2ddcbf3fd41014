// Lesson 03: tensor cores through mma.sync, fed by ldmatrix.
#include "common/runner.hpp"
#include "lessons/03_tensor_cores/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson03::kLesson, argc, argv); }
