// Lesson 13: persistent clusters with grouped rasterization.
#include "common/runner.hpp"
#include "lessons/13_persistent_raster/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson13::kLesson, argc, argv); }
