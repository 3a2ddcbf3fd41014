// Lesson 03: tensor cores through mma.sync, fed by ldmatrix.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson03(), argc, argv); }
