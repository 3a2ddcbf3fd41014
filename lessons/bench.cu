// make bench: every registered lesson over the course's standard sweep of shapes, each timed
// against cuBLAS in the same process and the same run. Writes one CSV row per lesson and shape.
//
//   gemm_bench --csv docs/results.csv --commit abc1234 [--lessons 1,2,7] [--shapes 4096,8192]
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/runner.hpp"
#include "lessons/registry.hpp"

namespace {

using gemm::GemmProblem;

// COURSE.md section 7: the standard sweep (M x N x K).
const std::vector<GemmProblem> kStandardSweep = {
    {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
    {6144, 6144, 6144}, {8192, 8192, 8192}, {8192, 8192, 1024},
    {1024, 1024, 8192}, {4096, 14336, 4096}, {3000, 5000, 4000},
};

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) values.push_back(std::stoi(item));
  return values;
}

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  char date[16];
  std::strftime(date, sizeof(date), "%Y-%m-%d", std::gmtime(&now));
  return date;
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv_path, commit = "unknown";
  std::vector<int> lesson_ids, square_sizes;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      const std::string value = argv[++i];
      if (flag == "--csv") csv_path = value;
      else if (flag == "--commit") commit = value;
      else if (flag == "--lessons") lesson_ids = parse_list(value);
      else if (flag == "--shapes") square_sizes = parse_list(value);
      else throw std::invalid_argument("unknown option '" + flag + "'");
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gemm_bench: error: %s\n", error.what());
    std::fprintf(stderr, "usage: gemm_bench [--csv FILE] [--commit SHA] [--lessons 1,2] [--shapes 4096,8192]\n");
    return gemm::kExitBadUsage;
  }

  std::vector<const gemm::Lesson*> lessons;
  for (const gemm::Lesson& lesson : gemm::all_lessons())
    if (lesson_ids.empty() || std::find(lesson_ids.begin(), lesson_ids.end(), lesson.id) != lesson_ids.end())
      lessons.push_back(&lesson);
  std::vector<GemmProblem> shapes = kStandardSweep;
  if (!square_sizes.empty()) {
    shapes.clear();
    for (int size : square_sizes) shapes.push_back({size, size, size});
  }

  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::fprintf(stderr, "gemm_bench: error: no CUDA GPU found\n");
    return gemm::kExitNoGpu;
  }

  try {
    gemm::LessonRunner runner(0);
    const std::string date = today_utc();
    std::ostringstream csv;
    csv << gemm::csv_header() << ",date,commit\n";
    bool all_passed = true;
    // Slow lessons get fewer repetitions (at least 3) so that the sweep stays within minutes.
    const gemm::TimingOptions timing{.warmup = 2, .iters = 20, .max_total_seconds = 2.0};

    for (const GemmProblem& shape : shapes) {
      runner.set_problem(shape, /*seed=*/1);
      for (const gemm::Lesson* lesson : lessons) {
        if (const auto reason = gemm::unsupported_reason(*lesson, runner.device())) {
          std::printf("%s skipped: %s\n", gemm::lesson_name(*lesson).c_str(), reason->c_str());
          continue;
        }
        gemm::RunReport report;
        report.lesson = lesson;
        report.device = runner.device();
        report.problem = shape;
        report.seed = 1;
        report.check = runner.check(*lesson);
        if (report.check->passed()) {
          report.lesson_time = runner.time_lesson(*lesson, timing);
          report.cublas_time = runner.time_cublas(timing);
        } else {
          all_passed = false;
        }
        csv << gemm::format_csv_row(report) << "," << date << "," << commit << "\n";
        std::printf("%s %5lld x %5lld x %5lld  %s  %8.1f TFLOP/s  cuBLAS %6.1f  ratio %6.1f%%\n",
                    gemm::lesson_name(*lesson).c_str(), (long long)shape.m, (long long)shape.n,
                    (long long)shape.k, report.check->passed() ? "pass" : "FAIL",
                    report.check->passed() ? report.lesson_tflops() : 0.0,
                    report.check->passed() ? report.cublas_tflops() : 0.0,
                    report.check->passed() ? 100.0 * report.ratio_to_cublas() : 0.0);
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
