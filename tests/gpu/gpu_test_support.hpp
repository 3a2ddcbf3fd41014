#pragma once

#include <gtest/gtest.h>

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

// Whether this GPU runs `lesson`. If not, the test is marked skipped (or, with REQUIRE_GPU=1,
// failed) with the reason, and the caller returns: `if (!runs_here(lesson)) return;`.
inline bool runs_here(const gemm::Lesson& lesson) {
  const auto reason = gemm::unsupported_reason(lesson, shared_runner().device());
  if (!reason) return true;
  if (gpu_required())
    ADD_FAILURE() << "REQUIRE_GPU=1: " << *reason;
  else
    [&] { GTEST_SKIP() << *reason; }();  // (GTEST_SKIP returns: here, from the lambda alone)
  return false;
}

}  // namespace gpu_test_support
