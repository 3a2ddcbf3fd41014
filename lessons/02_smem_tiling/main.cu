// Lesson 02: shared-memory blocking and 2D register tiling on CUDA cores.
#include "common/runner.hpp"
#include "lessons/02_smem_tiling/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson02::kLesson, argc, argv); }
