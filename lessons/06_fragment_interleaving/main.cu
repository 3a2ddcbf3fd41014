// Lesson 06: fragment loads interleaved with the MMAs.
#include "common/runner.hpp"
#include "lessons/06_fragment_interleaving/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson06::kLesson, argc, argv); }
