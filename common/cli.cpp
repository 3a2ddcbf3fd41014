#include "common/cli.hpp"

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace gemm {
namespace {

// Parses a whole string as a decimal integer in [minimum, maximum], or throws UsageError.
int64_t parse_integer(const std::string& flag, const std::string& text, int64_t minimum,
                      int64_t maximum) {
  if (text.empty() || text[0] == '-' || text[0] == '+' || text[0] == ' ')
    throw UsageError(flag + " needs a non-negative integer, got '" + text + "'");
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (*end != '\0') throw UsageError(flag + " needs an integer, got '" + text + "'");
  if (errno == ERANGE || value > uint64_t(maximum) || int64_t(value) < minimum)
    throw UsageError(flag + " = " + text + " is out of range [" + std::to_string(minimum) + ", " +
                     std::to_string(maximum) + "]");
  return int64_t(value);
}

OutputFormat parse_format(const std::string& text) {
  if (text == "table") return OutputFormat::table;
  if (text == "csv") return OutputFormat::csv;
  if (text == "json") return OutputFormat::json;
  throw UsageError("--format must be table, csv or json, got '" + text + "'");
}

}  // namespace

RunOptions parse_run_options(int argc, const char* const* argv) {
  RunOptions options;
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  // Sizes are parsed up to 2^62 here so that the shape contract, not the parser, reports "too large".
  constexpr int64_t kSizeMax = int64_t(1) << 62;

  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    std::string value;
    bool has_inline_value = false;
    if (const size_t equals = flag.find('='); flag.rfind("--", 0) == 0 && equals != std::string::npos) {
      value = flag.substr(equals + 1);
      flag = flag.substr(0, equals);
      has_inline_value = true;
    }

    const bool takes_value = flag == "--m" || flag == "--n" || flag == "--k" || flag == "--iters" ||
                             flag == "--warmup" || flag == "--seed" || flag == "--format";
    if (takes_value && !has_inline_value) {
      if (i + 1 >= argc) throw UsageError(flag + " needs a value");
      value = argv[++i];
    } else if (!takes_value && has_inline_value) {
      throw UsageError(flag + " takes no value");
    }

    if (flag == "--m") options.problem.m = parse_integer(flag, value, 0, kSizeMax);
    else if (flag == "--n") options.problem.n = parse_integer(flag, value, 0, kSizeMax);
    else if (flag == "--k") options.problem.k = parse_integer(flag, value, 0, kSizeMax);
    else if (flag == "--iters") options.iters = int(parse_integer(flag, value, 1, kIntMax));
    else if (flag == "--warmup") options.warmup = int(parse_integer(flag, value, 0, kIntMax));
    else if (flag == "--seed")
      options.seed = uint64_t(parse_integer(flag, value, 0, std::numeric_limits<int64_t>::max()));
    else if (flag == "--format") options.format = parse_format(value);
    else if (flag == "--no-check") options.check = false;
    else if (flag == "--profile") options.profile = true;
    else if (flag == "--help" || flag == "-h") options.help = true;
    else throw UsageError("unknown option '" + std::string(argv[i]) + "'");
  }
  return options;
}

std::string usage_text(const std::string& program) {
  return "usage: " + program +
         " [--m M] [--n N] [--k K] [--iters I] [--warmup W] [--seed S]\n"
         "       [--no-check] [--format table|csv|json] [--profile] [--help]\n"
         "\n"
         "Computes D = A * B^T in bf16 (fp32 accumulation), checks D against cuBLAS and times\n"
         "the lesson's kernel against cuBLAS in the same run.\n"
         "\n"
         "  --m, --n, --k   problem size (default 4096 each); M >= 1, N and K multiples of 8\n"
         "  --iters I       timed repetitions (default 20); the median is reported\n"
         "  --warmup W      untimed runs before timing (default 5)\n"
         "  --seed S        seed of the random inputs (default 1)\n"
         "  --no-check      skip the comparison with cuBLAS\n"
         "  --format F      table (default), csv or json\n"
         "  --profile       one warm-up and one launch of the lesson kernel only, for ncu\n"
         "\n"
         "exit status: 0 pass, 1 check failed, 2 no CUDA GPU, 3 GPU cannot run this lesson,\n"
         "             4 bad command line or shape, 5 CUDA error\n";
}

}  // namespace gemm
