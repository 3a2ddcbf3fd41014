#include "common/harness/cli.hpp"

#include "common/harness/shape_sets.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <sstream>
#include <string_view>

namespace gemm {

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

namespace {

// Parses a whole string as a finite decimal number, or throws UsageError.
float parse_float(const std::string& flag, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const float value = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value))
    throw UsageError(flag + " needs a finite number, got '" + text + "'");
  return value;
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
                             flag == "--warmup" || flag == "--seed" || flag == "--format" ||
                             flag == "--result-file" || flag == "--alpha" || flag == "--beta" ||
                             flag == "--act" || flag == "--config";
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
    else if (flag == "--result-file") {
      if (value.empty()) throw UsageError("--result-file needs a file name");
      options.result_file = value;
    } else if (flag == "--alpha") {
      options.epilogue.alpha = parse_float(flag, value);
      options.epilogue.given = true;
    } else if (flag == "--beta") {
      options.epilogue.beta = parse_float(flag, value);
      options.epilogue.given = true;
    } else if (flag == "--bias") {
      options.epilogue.bias = true;
      options.epilogue.given = true;
    } else if (flag == "--act") {
      const auto activation = parse_activation(value);
      if (!activation) throw UsageError("--act must be none, relu, gelu or silu, got '" + value + "'");
      options.epilogue.activation = *activation;
      options.epilogue.given = true;
    }
    else if (flag == "--config") {
      if (value.empty()) throw UsageError("--config needs a configuration name");
      options.config = value;
    }
    else if (flag == "--no-check") options.check = false;
    else if (flag == "--check-only") options.time = false;
    else if (flag == "--profile") options.profile = true;
    else if (flag == "--help" || flag == "-h") options.help = true;
    else if (flag == "--describe") options.describe = true;
    else throw UsageError("unknown option '" + std::string(argv[i]) + "'");
  }
  return options;
}

std::string usage_text(const std::string& program) {
  return "usage: " + program +
         " [--m M] [--n N] [--k K] [--iters I] [--warmup W] [--seed S]\n"
         "       [--no-check | --check-only] [--format table|csv|json] [--result-file PATH]\n"
         "       [--profile] [--describe] [--help]\n"
         "       [--alpha A] [--beta B] [--bias] [--act none|relu|gelu|silu]   (lessons 15-17)\n"
         "       [--config NAME]                                          (lessons 16-18)\n"
         "\n"
         "Computes D = A * B^T in bf16 (fp32 accumulation; lesson 18 from e4m3 operands with block\n"
         "scales), checks D against cuBLAS (cuBLASLt's fp8 for lesson 18) and times the lesson's\n"
         "kernel against it in the same run, alternately, pair by pair.\n"
         "\n"
         "  --m, --n, --k   problem size (default 4096 each); M >= 1, N and K multiples of 8,\n"
         "                  each at most 2^30\n"
         "  --iters I       timed pairs (default 30; more for small shapes); medians are reported,\n"
         "                  and the ratio to cuBLAS is the median of the per-pair ratios\n"
         "  --warmup W      untimed pairs first (default 5, and at least 0.3 s of GPU work)\n"
         "  --seed S        seed of the random inputs (default 1)\n"
         "  --no-check      skip the comparison with cuBLAS\n"
         "  --check-only    check, but do not time\n"
         "  --format F      table (default), csv or json\n"
         "  --result-file P also write the JSON report to file P\n"
         "  --profile       one warm-up and one launch of the lesson kernel only, for ncu\n"
         "  --describe      print what the lesson is, as one line of JSON, and exit (no GPU needed)\n"
         "  --alpha, --beta, --bias, --act   lesson 15's fused epilogue:\n"
         "                  D = act(alpha * A * B^T + beta * C + bias), bias one value per column\n"
         "  --config NAME   run this compiled configuration instead of the cost model's choice\n"
         "                  (an unknown name lists the configurations)\n"
         "\n"
         "exit status: 0 pass, 1 check failed, 2 no CUDA GPU, 3 GPU cannot run this lesson,\n"
         "             4 bad command line or shape, 5 CUDA error\n";
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

std::vector<int64_t> parse_integer_list(const std::string& flag, const std::string& text,
                                        int64_t minimum, int64_t maximum) {
  std::vector<int64_t> values;
  for (const std::string& item : split_list(text))
    values.push_back(parse_integer(flag, item, minimum, maximum));
  if (values.empty()) throw UsageError(flag + " needs a list of integers, got '" + text + "'");
  return values;
}

std::vector<GemmProblem> parse_shape_list(const std::string& flag, const std::string& text) {
  std::vector<GemmProblem> shapes;
  for (const std::string& item : split_list(text)) {
    if (const std::vector<GemmProblem>* set = named_shape_set(item)) {
      shapes.insert(shapes.end(), set->begin(), set->end());
      continue;
    }
    std::vector<int64_t> sizes;
    std::string::size_type start = 0;
    while (true) {
      const std::string::size_type end = item.find('x', start);
      sizes.push_back(parse_integer(flag, item.substr(start, end - start), 1, int64_t(1) << 30));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    if (sizes.size() == 1) sizes = {sizes[0], sizes[0], sizes[0]};
    if (sizes.size() != 3)
      throw UsageError(flag + " takes shapes S or MxNxK, got '" + item + "'");
    shapes.push_back({sizes[0], sizes[1], sizes[2]});
  }
  if (shapes.empty()) throw UsageError(flag + " needs a list of shapes, got '" + text + "'");
  return shapes;
}

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  char date[16];
  std::strftime(date, sizeof(date), "%Y-%m-%d", std::gmtime(&now));
  return date;
}

}  // namespace gemm
