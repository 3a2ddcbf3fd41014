// Lesson 02: shared-memory blocking and 2D register tiling on CUDA cores.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson02(), argc, argv); }
