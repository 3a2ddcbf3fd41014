// Lesson 13: persistent clusters with grouped rasterization.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson13(), argc, argv); }
