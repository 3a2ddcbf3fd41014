// Lesson 09: warp specialization with setmaxnreg.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson09(), argc, argv); }
