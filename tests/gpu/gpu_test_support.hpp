#pragma once

#include "common/harness/runner.hpp"

namespace gpu_test_support {

// REQUIRE_GPU=1 in the environment: what would be skipped for lack of a (suitable) GPU fails.
bool gpu_required();

// One runner (stream, cuBLAS, buffers) shared by all tests of the process. Never destroyed:
// tearing down cuBLAS during static destruction, after the CUDA runtime, is not safe.
inline gemm::LessonRunner& shared_runner() {
  static gemm::LessonRunner* runner = new gemm::LessonRunner(0);
  return *runner;
}

}  // namespace gpu_test_support
