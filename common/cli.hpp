#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/gemm.hpp"

namespace gemm {

// Exit codes of every lesson executable (also listed by --help and in the README).
enum ExitCode : int {
  kExitPass = 0,
  kExitCheckFailed = 1,
  kExitNoGpu = 2,
  kExitUnsupportedGpu = 3,
  kExitBadUsage = 4,
  kExitCudaError = 5,
};

enum class OutputFormat { table, csv, json };

// The options every lesson executable takes (COURSE.md section 4).
struct RunOptions {
  GemmProblem problem;  // --m --n --k, default 4096 each
  int iters = 20;       // --iters: timed repetitions
  int warmup = 5;       // --warmup: untimed runs first
  uint64_t seed = 1;    // --seed: the random inputs
  bool check = true;    // --no-check turns the correctness check off
  bool profile = false; // --profile: one warm-up and one launch of the lesson kernel only
  bool help = false;    // --help
  OutputFormat format = OutputFormat::table;  // --format table|csv|json
};

// A command line the executable cannot accept. what() is one line naming the problem.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses argv[1..argc). Accepts "--m 512" and "--m=512". Throws UsageError for an unknown flag,
// a missing or malformed value, or a value out of range. Does not check the shape contract.
RunOptions parse_run_options(int argc, const char* const* argv);

// The --help text.
std::string usage_text(const std::string& program);

}  // namespace gemm
