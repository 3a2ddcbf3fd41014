// Lesson 05: a multi-stage cp.async pipeline.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson05(), argc, argv); }
