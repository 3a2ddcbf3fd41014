#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

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

// Lesson 15's fused epilogue as the command line asks for it (--alpha --beta --bias --act).
struct EpilogueOptions {
  float alpha = 1.0f;
  float beta = 0.0f;
  bool bias = false;
  Activation activation = Activation::none;
  bool given = false;  // any of the four flags appeared: lessons without the epilogue refuse
};

// The options every lesson executable takes.
struct RunOptions {
  GemmProblem problem;  // --m --n --k, default 4096 each
  int iters = 30;       // --iters: timed pairs (lesson and reference, alternately)
  int warmup = 5;       // --warmup: untimed pairs first (and at least 0.3 s of GPU work)
  uint64_t seed = 1;    // --seed: the random inputs
  bool check = true;    // --no-check turns the correctness check off
  bool time = true;     // --check-only turns the timing off (the grader's correctness runs)
  bool profile = false; // --profile: one warm-up and one launch of the lesson kernel only
  bool help = false;    // --help
  bool describe = false;  // --describe: the lesson's facts as one JSON line (describe_lesson)
  OutputFormat format = OutputFormat::table;  // --format table|csv|json
  std::string result_file;  // --result-file: also write the JSON report to this file
  EpilogueOptions epilogue;  // --alpha --beta --bias --act (lesson 15)
  std::string config;        // --config NAME: one compiled configuration (lesson 16)
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

// A whole string as a decimal integer in [minimum, maximum] ("--seed 7"); throws UsageError naming
// the flag otherwise.
int64_t parse_integer(const std::string& flag, const std::string& text, int64_t minimum,
                      int64_t maximum);
// The items of a comma-separated list ("stages_08,tiles_11"), empty items left out.
std::vector<std::string> split_list(const std::string& text);
// A comma-separated list of integers, each in [minimum, maximum] ("--shapes 4096,8192"); throws
// UsageError naming the flag otherwise.
std::vector<int64_t> parse_integer_list(const std::string& flag, const std::string& text,
                                        int64_t minimum, int64_t maximum);
// A comma-separated list of problem shapes, each `S` (S x S x S), `MxNxK` ("4096,8192x8192x1024")
// or the name of one of the course's lists, `standard` or `workloads` (common/harness/shape_sets.hpp);
// every dimension in [1, 2^30]; throws UsageError naming the flag otherwise. Does not check the
// shape contract.
std::vector<GemmProblem> parse_shape_list(const std::string& flag, const std::string& text);
// Today's date in UTC (YYYY-MM-DD), the date column of the results files.
std::string today_utc();

}  // namespace gemm
