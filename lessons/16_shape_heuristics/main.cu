// Lesson 16: a cost model chooses one of the final kernel's compiled configurations per problem.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson16(), argc, argv); }
