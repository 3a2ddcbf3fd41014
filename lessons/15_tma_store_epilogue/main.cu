// Lesson 15: the TMA-store epilogue, with the fused epilogue.
#include "common/runner.hpp"
#include "lessons/15_tma_store_epilogue/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson15::kLesson, argc, argv); }
