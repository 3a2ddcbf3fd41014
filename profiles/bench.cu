// make bench: every registered lesson over the course's standard sweep of shapes, each timed
// against cuBLAS with the paired protocol (common/harness/timing.hpp): in the same process, alternately,
// pair by pair, with the SM clock and the power recorded. Writes one CSV row per lesson and shape.
// A lesson with lesson 15's fused epilogue also gets rows for gelu(A * B^T + bias) and for
// A * B^T + C, against cuBLASLt's matmul with the same epilogue, on the shapes with M and N of at
// least 2048.
//
//   gemm_bench --csv docs/results.csv --commit abc1234 [--lessons 1,2,7]
//              [--shapes 4096,8192x8192x1024|standard|workloads] [--epilogues plain,bias_gelu,c]
//
// Without --shapes: the standard sweep (common/harness/shape_sets.hpp).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/harness/cli.hpp"
#include "common/harness/runner.hpp"
#include "common/harness/shape_sets.hpp"
#include "lessons/registry.hpp"

namespace {

using gemm::GemmProblem;

// The epilogues a row can have: the plain product, and two fused ones that cuBLASLt also fuses.
struct EpilogueCase {
  const char* name;
  gemm::EpilogueOptions options;
};
std::vector<EpilogueCase> epilogue_cases() {
  gemm::EpilogueOptions bias_gelu;
  bias_gelu.bias = true;
  bias_gelu.activation = gemm::Activation::gelu;
  bias_gelu.given = true;
  gemm::EpilogueOptions with_c;
  with_c.beta = 1.0f;
  with_c.given = true;
  return {{"plain", gemm::EpilogueOptions{}}, {"bias_gelu", bias_gelu}, {"c", with_c}};
}
// The fused epilogues are timed where the epilogue is a real share of the work and the tiles fill
// the GPU: M and N of at least 2048.
bool has_fused_rows(const GemmProblem& shape) { return shape.m >= 2048 && shape.n >= 2048; }

// "--epilogues plain,c": the named cases, in the order given.
std::vector<EpilogueCase> chosen_epilogues(const std::string& flag, const std::string& value) {
  const std::vector<EpilogueCase> known = epilogue_cases();
  std::string names;
  for (const EpilogueCase& known_case : known)
    names += (names.empty() ? "" : ", ") + std::string(known_case.name);
  std::vector<EpilogueCase> chosen;
  for (const std::string& name : gemm::split_list(value)) {
    const auto match = std::find_if(known.begin(), known.end(),
                                    [&](const EpilogueCase& known_case) { return name == known_case.name; });
    if (match == known.end())
      throw std::invalid_argument(flag + ": no epilogue '" + name + "' (" + names + ")");
    chosen.push_back(*match);
  }
  if (chosen.empty()) throw std::invalid_argument(flag + " needs at least one epilogue");
  return chosen;
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv_path, commit = "unknown";
  std::vector<int64_t> lesson_ids;
  std::vector<GemmProblem> chosen_shapes;
  std::vector<EpilogueCase> epilogues = epilogue_cases();
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      const std::string value = argv[++i];
      if (flag == "--csv") csv_path = value;
      else if (flag == "--commit") commit = value;
      else if (flag == "--lessons") lesson_ids = gemm::parse_integer_list(flag, value, 1, 99);
      else if (flag == "--shapes") chosen_shapes = gemm::parse_shape_list(flag, value);
      else if (flag == "--epilogues") epilogues = chosen_epilogues(flag, value);
      else throw std::invalid_argument("unknown option '" + flag + "'");
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", error.what());
    std::fprintf(stderr, "usage: gemm_bench [--csv FILE] [--commit SHA] [--lessons 1,2] "
                         "[--shapes 4096,8192x8192x1024] [--epilogues plain,bias_gelu,c]\n");
    return gemm::kExitBadUsage;
  }

  std::vector<const gemm::Lesson*> lessons;
  for (const gemm::Lesson& lesson : gemm::all_lessons())
    if (lesson_ids.empty() || std::find(lesson_ids.begin(), lesson_ids.end(), lesson.id) != lesson_ids.end())
      lessons.push_back(&lesson);
  const std::vector<GemmProblem> shapes = chosen_shapes.empty() ? gemm::standard_sweep() : chosen_shapes;

  if (const auto missing = gemm::missing_gpu()) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", missing->c_str());
    return gemm::kExitNoGpu;
  }

  try {
    gemm::LessonRunner runner(0);
    const std::string date = gemm::today_utc();
    std::ostringstream csv;
    csv << gemm::csv_header() << ",date,commit\n";
    bool all_passed = true;
    // Slow lessons get fewer pairs (at least 3) so that the sweep stays within minutes.
    gemm::TimingOptions timing;
    timing.warmup = 2;
    timing.max_total_seconds = 2.0;

    struct Case {
      GemmProblem shape;
      EpilogueCase epilogue;
    };
    // The plain product on every shape first, then each fused epilogue on its shapes.
    std::vector<Case> cases;
    for (const EpilogueCase& epilogue : epilogues)
      for (const GemmProblem& shape : shapes)
        if (!epilogue.options.given || has_fused_rows(shape)) cases.push_back({shape, epilogue});

    for (const Case& test_case : cases) {
      const GemmProblem& shape = test_case.shape;
      const gemm::EpilogueOptions& epilogue = test_case.epilogue.options;
      runner.set_problem(shape, /*seed=*/1, epilogue);
      const gemm::WorkloadKind* inputs = &gemm::workloads::kind_bf16;
      for (const gemm::Lesson* lesson : lessons) {
        if (gemm::epilogue_refusal(*lesson, epilogue)) continue;
        // A lesson of another kind (lesson 18's e4m3 operands) gets its own inputs, made from the
        // same seed's A and B.
        if (lesson->workload != inputs) {
          inputs = lesson->workload;
          runner.set_problem(shape, /*seed=*/1, epilogue, *inputs);
        }
        if (const auto reason = gemm::unsupported_reason(*lesson, runner.device())) {
          std::printf("%s skipped: %s\n", gemm::lesson_name(*lesson).c_str(), reason->c_str());
          continue;
        }
        const gemm::RunReport report = runner.check_and_time(*lesson, timing);
        all_passed = all_passed && report.check->passed();
        csv << gemm::format_csv_row(report) << "," << date << "," << commit << "\n";
        const bool timed = report.timing.timed();
        std::printf("%s %5lld x %5lld x %5lld %-9s %s  %7.1f TFLOP/s  %s %6.1f  ratio %6.1f%%  %s\n",
                    gemm::lesson_name(*lesson).c_str(), (long long)shape.m, (long long)shape.n,
                    (long long)shape.k, test_case.epilogue.name,
                    report.check->passed() ? "pass" : "FAIL", timed ? report.lesson_tflops() : 0.0,
                    report.reference_name.c_str(), timed ? report.reference_tflops() : 0.0,
                    timed ? 100.0 * report.timing.ratio : 0.0,
                    timed ? report.timing.clock.summary().c_str() : "");
        std::fflush(stdout);
      }
    }

    if (!csv_path.empty()) {
      std::ofstream file(csv_path);
      file << csv.str();
      if (!file) throw std::runtime_error("cannot write " + csv_path);
      std::printf("wrote %s\n", csv_path.c_str());
    } else {
      std::printf("%s", csv.str().c_str());
    }
    return all_passed ? gemm::kExitPass : gemm::kExitCheckFailed;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", error.what());
    return gemm::kExitCudaError;
  }
}
