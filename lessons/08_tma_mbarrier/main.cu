// Lesson 08: TMA with transaction mbarriers.
#include "common/runner.hpp"
#include "lessons/08_tma_mbarrier/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson08::kLesson, argc, argv); }
