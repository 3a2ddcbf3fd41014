// Lesson 01: the naive kernel. Everything but the kernel (command line, random inputs, the check
// against cuBLAS, timing, the report) is the course's common harness: see common/harness/runner.hpp.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson01(), argc, argv); }
