// Lesson 12: thread-block clusters with TMA multicast.
#include "common/runner.hpp"
#include "lessons/12_cluster_multicast/kernel.cuh"

int main(int argc, char** argv) { return gemm::run_lesson(lesson12::kLesson, argc, argv); }
