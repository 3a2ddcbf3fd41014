// Lesson 16: a cost model chooses one of lesson 15's compiled configurations per problem.
#include "common/runner.hpp"
#include "lessons/16_shape_heuristics/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson16::kLesson, argc, argv); }
