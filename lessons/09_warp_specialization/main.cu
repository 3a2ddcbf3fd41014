// Lesson 09: warp specialization with setmaxnreg.
#include "common/runner.hpp"
#include "lessons/09_warp_specialization/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson09::kLesson, argc, argv); }
