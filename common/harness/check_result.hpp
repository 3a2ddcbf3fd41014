#pragma once
// What a check of a lesson's D found (common/harness/runner.hpp's check, and a workload's
// comparison of D with its reference: common/workloads/workload.hpp).

#include <cstdint>
#include <optional>

#include "common/harness/verify.hpp"

namespace gemm {

// What a lesson wrote before the kernel ahead of it had finished (the late-input check of a lesson
// that waits for its prerequisite, lesson 17): elements of D and its guard zone, and 2-byte words
// of its workspace. The kernel ahead may still read that memory, so any of it is an error.
struct EarlyWrites {
  int64_t d_elements = 0;
  int64_t workspace_words = 0;
  bool any() const { return d_elements > 0 || workspace_words > 0; }
};

struct CheckResult {
  VerifyReport against_cublas;                 // cuBLAS / cuBLASLt, fp32 output
  std::optional<VerifyReport> against_cpu;     // fp64 on the CPU, small shapes only
  EarlyWrites early_writes;                    // late-input check only; none otherwise
  // Of a workspace that resets itself: the bytes of its flags (LaunchPlan::workspace_flag_bytes)
  // that the launch left non-zero, which the next launch would take for parts already counted.
  int64_t flag_bytes_left_set = 0;
  uint64_t output_hash = 0;                    // FNV-1a of D's bytes: reruns must agree
  bool passed() const {
    return against_cublas.passed() && (!against_cpu || against_cpu->passed()) &&
           !early_writes.any() && flag_bytes_left_set == 0;
  }
};

}  // namespace gemm
