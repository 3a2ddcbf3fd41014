// Lesson 07: wgmma, Hopper's warpgroup MMA.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson07(), argc, argv); }
