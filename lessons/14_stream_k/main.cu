// Lesson 14: Stream-K.
#include "common/runner.hpp"
#include "lessons/14_stream_k/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson14::kLesson, argc, argv); }
