// Lesson 08: TMA with transaction mbarriers.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson08(), argc, argv); }
