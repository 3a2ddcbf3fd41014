// Lesson 01: the naive kernel. Everything but the kernel (command line, random inputs, the check
// against cuBLAS, timing, the report) is the course's common harness: see common/runner.hpp.
#include "common/runner.hpp"
#include "lessons/01_naive/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson01::kLesson, argc, argv); }
