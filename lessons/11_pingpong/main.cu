// Lesson 11: ping-pong consumers on a persistent grid.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson11(), argc, argv); }
