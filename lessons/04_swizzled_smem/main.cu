// Lesson 04: XOR-swizzled shared memory.
#include "common/runner.hpp"
#include "lessons/04_swizzled_smem/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson04::kLesson, argc, argv); }
