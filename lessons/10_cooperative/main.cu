// Lesson 10: cooperative consumers on a 128 x 256 tile.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson10(), argc, argv); }
