// Lesson 04: XOR-swizzled shared memory.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson04(), argc, argv); }
