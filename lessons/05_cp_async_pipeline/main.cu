// Lesson 05: a multi-stage cp.async pipeline.
#include "common/runner.hpp"
#include "lessons/05_cp_async_pipeline/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson05::kLesson, argc, argv); }
