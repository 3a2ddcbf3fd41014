// Lesson 10: cooperative consumers on a 128 x 256 tile.
#include "common/runner.hpp"
#include "lessons/10_cooperative/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson10::kLesson, argc, argv); }
