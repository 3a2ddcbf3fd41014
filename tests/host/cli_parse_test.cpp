#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/harness/cli.hpp"
#include "common/harness/shape_sets.hpp"

using gemm::OutputFormat;
using gemm::parse_run_options;
using gemm::RunOptions;
using gemm::UsageError;

namespace {

RunOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "lesson01");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return parse_run_options(int(argv.size()), argv.data());
}

// The one-line message of the UsageError that `call` throws, or "no error".
template <class Call>
std::string usage_error_of(Call call) {
  try {
    call();
  } catch (const UsageError& error) {
    return error.what();
  }
  return "no error";
}

// The one-line message of the UsageError that parsing throws.
std::string error_of(std::vector<std::string> args) {
  return usage_error_of([&] { parse(std::move(args)); });
}

}  // namespace

TEST(CliParse, DefaultsMatchTheCourse) {
  const RunOptions options = parse({});
  EXPECT_EQ(options.problem.m, 4096);
  EXPECT_EQ(options.problem.n, 4096);
  EXPECT_EQ(options.problem.k, 4096);
  EXPECT_EQ(options.iters, 30);  // timed pairs
  EXPECT_EQ(options.warmup, 5);
  EXPECT_EQ(options.seed, 1u);
  EXPECT_TRUE(options.check);
  EXPECT_TRUE(options.time);
  EXPECT_FALSE(options.profile);
  EXPECT_EQ(options.format, OutputFormat::table);
  EXPECT_TRUE(options.result_file.empty());
  EXPECT_FALSE(options.epilogue.given);
  EXPECT_EQ(options.epilogue.alpha, 1.0f);
  EXPECT_EQ(options.epilogue.beta, 0.0f);
  EXPECT_FALSE(options.epilogue.bias);
  EXPECT_EQ(options.epilogue.activation, gemm::Activation::none);
}

TEST(CliParse, ReadsTheEpilogueAndTheResultFile) {
  const RunOptions options = parse({"--alpha", "1.5", "--beta=0.5", "--bias", "--act", "gelu",
                                    "--result-file", "out.json"});
  EXPECT_TRUE(options.epilogue.given);
  EXPECT_EQ(options.epilogue.alpha, 1.5f);
  EXPECT_EQ(options.epilogue.beta, 0.5f);
  EXPECT_TRUE(options.epilogue.bias);
  EXPECT_EQ(options.epilogue.activation, gemm::Activation::gelu);
  EXPECT_EQ(options.result_file, "out.json");
  // Any one of the four flags marks the epilogue as asked for, even with its default value.
  EXPECT_TRUE(parse({"--act", "none"}).epilogue.given);
  EXPECT_TRUE(parse({"--alpha", "1"}).epilogue.given);
}

TEST(CliParse, RejectsBadEpilogueValues) {
  EXPECT_EQ(error_of({"--act", "tanh"}), "--act must be none, relu, gelu or silu, got 'tanh'");
  EXPECT_EQ(error_of({"--alpha", "x"}), "--alpha needs a finite number, got 'x'");
  EXPECT_EQ(error_of({"--beta", "inf"}), "--beta needs a finite number, got 'inf'");
  EXPECT_EQ(error_of({"--beta", "nan"}), "--beta needs a finite number, got 'nan'");
  EXPECT_EQ(error_of({"--bias=1"}), "--bias takes no value");
  EXPECT_EQ(error_of({"--result-file="}), "--result-file needs a file name");
}

TEST(CliParse, ReadsEveryFlagInBothSpellings) {
  const RunOptions options = parse({"--m", "128", "--n=256", "--k", "64", "--iters=3", "--warmup",
                                    "0", "--seed", "42", "--no-check", "--format=json", "--profile"});
  EXPECT_EQ(options.problem.m, 128);
  EXPECT_EQ(options.problem.n, 256);
  EXPECT_EQ(options.problem.k, 64);
  EXPECT_EQ(options.iters, 3);
  EXPECT_EQ(options.warmup, 0);
  EXPECT_EQ(options.seed, 42u);
  EXPECT_FALSE(options.check);
  EXPECT_TRUE(options.profile);
  EXPECT_EQ(options.format, OutputFormat::json);
  EXPECT_EQ(parse({"--format", "csv"}).format, OutputFormat::csv);
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_FALSE(parse({"--check-only"}).time);
}

TEST(CliParse, ShapeValuesAreNotJudgedHere) {
  // --m 0 parses; the shape contract (not the parser) rejects it, with its own message.
  EXPECT_EQ(parse({"--m", "0"}).problem.m, 0);
}

TEST(CliParse, UnknownFlag) {
  EXPECT_EQ(error_of({"--bogus"}), "unknown option '--bogus'");
  EXPECT_EQ(error_of({"-m", "5"}), "unknown option '-m'");
  EXPECT_EQ(error_of({"4096"}), "unknown option '4096'");
}

TEST(CliParse, MissingValue) { EXPECT_EQ(error_of({"--m"}), "--m needs a value"); }

TEST(CliParse, MalformedValues) {
  EXPECT_EQ(error_of({"--m", "12x"}), "--m needs an integer, got '12x'");
  EXPECT_EQ(error_of({"--n", "-8"}), "--n needs a non-negative integer, got '-8'");
  EXPECT_EQ(error_of({"--k="}), "--k needs a non-negative integer, got ''");
  EXPECT_EQ(error_of({"--m", "--n"}), "--m needs a non-negative integer, got '--n'");
  EXPECT_EQ(error_of({"--format", "xml"}), "--format must be table, csv or json, got 'xml'");
  EXPECT_EQ(error_of({"--iters", "0"}), "--iters = 0 is out of range [1, 2147483647]");
  EXPECT_EQ(error_of({"--no-check=1"}), "--no-check takes no value");
}

TEST(CliParse, HugeNumbersAreRejectedNotWrapped) {
  EXPECT_NE(error_of({"--m", "99999999999999999999999"}).find("out of range"), std::string::npos);
  EXPECT_NE(error_of({"--warmup", "3000000000"}).find("out of range"), std::string::npos);
}

TEST(CliParse, UsageMentionsEveryFlagAndTheExitCodes) {
  const std::string usage = gemm::usage_text("lesson01");
  for (const char* flag : {"--m", "--n", "--k", "--iters", "--warmup", "--seed", "--no-check",
                           "--format", "--result-file", "--check-only", "--profile", "--alpha", "--beta", "--bias",
                           "--act", "exit status"})
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
}

// The lists of make bench and make sweep (--lessons 9,10 --shapes 4096,8192x8192x1024 --groups a,b).
TEST(CliParse, ListsSplitOnCommasAndCheckEveryInteger) {
  EXPECT_EQ(gemm::split_list("stages_08,,tiles_11"),
            (std::vector<std::string>{"stages_08", "tiles_11"}));
  EXPECT_EQ(gemm::parse_integer_list("--lessons", "9,10", 1, 99), (std::vector<int64_t>{9, 10}));
  const auto error_of_list = [](const std::string& text) {
    return usage_error_of([&] { gemm::parse_integer_list("--lessons", text, 1, 99); });
  };
  EXPECT_EQ(error_of_list("9,1o"), "--lessons needs an integer, got '1o'");
  EXPECT_EQ(error_of_list("0"), "--lessons = 0 is out of range [1, 99]");
  EXPECT_EQ(error_of_list(","), "--lessons needs a list of integers, got ','");
}

// One integer of a tool's flag (lesson17 chain --d-model 1024): a list is not one.
TEST(CliParse, OneIntegerIsOneIntegerInRange) {
  EXPECT_EQ(gemm::parse_integer("--d-model", "1024", 8, 65536), 1024);
  const auto error_of = [](const std::string& text) {
    return usage_error_of([&] { gemm::parse_integer("--d-model", text, 8, 65536); });
  };
  EXPECT_EQ(error_of("1024,2048"), "--d-model needs an integer, got '1024,2048'");
  EXPECT_EQ(error_of("4"), "--d-model = 4 is out of range [8, 65536]");
  EXPECT_EQ(error_of("-8"), "--d-model needs a non-negative integer, got '-8'");
}

TEST(CliParse, ShapeListsTakeTheCoursesNamedLists) {
  const std::vector<gemm::GemmProblem> shapes =
      gemm::parse_shape_list("--shapes", "standard,64,workloads");
  ASSERT_EQ(shapes.size(), gemm::standard_sweep().size() + 1 + gemm::workload_set().size());
  EXPECT_EQ(shapes[0].m, 1024);
  EXPECT_EQ(shapes[gemm::standard_sweep().size()].k, 64);
  // The workload set: 8 linear layers at 512, 2048 and 8192 tokens (the 70B gate-up at 8192 the
  // last but one of them), then at the 5 decode sizes.
  EXPECT_EQ(gemm::workload_set().size(), 64u);
  EXPECT_EQ(gemm::workload_set()[22].m, 8192);
  EXPECT_EQ(gemm::workload_set()[22].n, 57344);
  EXPECT_EQ(gemm::workload_set()[22].k, 8192);
  EXPECT_EQ(gemm::workload_set()[24].m, 16);  // the decode rows follow
  EXPECT_EQ(gemm::workload_set()[63].m, 256);
  EXPECT_EQ(gemm::workload_set()[63].n, 8192);
}

TEST(CliParse, ShapeListsTakeSquaresAndMxNxK) {
  const std::vector<gemm::GemmProblem> shapes =
      gemm::parse_shape_list("--shapes", "4096,8192x8192x1024");
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].m, 4096);
  EXPECT_EQ(shapes[0].n, 4096);
  EXPECT_EQ(shapes[0].k, 4096);
  EXPECT_EQ(shapes[1].m, 8192);
  EXPECT_EQ(shapes[1].n, 8192);
  EXPECT_EQ(shapes[1].k, 1024);
  const auto error_of_list = [](const std::string& text) {
    return usage_error_of([&] { gemm::parse_shape_list("--shapes", text); });
  };
  EXPECT_EQ(error_of_list("4096x8"), "--shapes takes shapes S or MxNxK, got '4096x8'");
  EXPECT_EQ(error_of_list("8x8xk"), "--shapes needs an integer, got 'k'");
  EXPECT_EQ(error_of_list("0"), "--shapes = 0 is out of range [1, 1073741824]");
  EXPECT_EQ(error_of_list(","), "--shapes needs a list of shapes, got ','");
}

TEST(CliParse, TodayIsAnIsoDate) {
  const std::string today = gemm::today_utc();
  ASSERT_EQ(today.size(), 10u);
  EXPECT_EQ(today[4], '-');
  EXPECT_EQ(today[7], '-');
}
