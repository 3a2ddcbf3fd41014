// Lesson 15: the TMA-store epilogue, with the fused epilogue.
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main(int argc, char** argv) { return gemm::run_lesson(gemm::lessons::lesson15(), argc, argv); }
