// Lesson 11: ping-pong consumers on a persistent grid.
#include "common/runner.hpp"
#include "lessons/11_pingpong/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson11::kLesson, argc, argv); }
