// Lesson 07: wgmma, Hopper's warpgroup MMA.
#include "common/runner.hpp"
#include "lessons/07_wgmma/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson07::kLesson, argc, argv); }
