// Lesson 06: fragment loads interleaved with the MMAs.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson06(), argc, argv); }
