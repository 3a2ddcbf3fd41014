// Lesson 12: thread-block clusters with TMA multicast.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson12(), argc, argv); }
