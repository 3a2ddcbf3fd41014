// make sweep: the configuration tables of the lessons' READMEs. Every variant of
// profiles/variants.hpp is checked and timed against cuBLAS with the course's paired protocol
// (the lesson executables' own), over a few shapes, and each group of variants becomes one CSV
// under profiles/sweeps/ that its README quotes.
//
//   gemm_sweep [--groups stages_08,tiles_11] [--shapes 4096,8192,8192x8192x1024]
//              [--out-dir profiles/sweeps] [--quick]
//              [--commit abc1234] [--list]
//
// --quick is the protocol of an oracle sweep, which times many variants of one shape in a row
// (lesson 16's configs_16: every configuration on 87 shapes): the clock is warmed up once per shape,
// with the protocol's 0.3 s before its first variant, and each variant after it gets a short
// warm-up of its own and at least 10 pairs, more up to 30 ms of its own time (the full protocol:
// 30 pairs and 0.2 s). Every variant is still checked first, and still paired with cuBLAS.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/harness/runner.hpp"
#include "profiles/variants.hpp"

namespace sweep {

std::vector<Variant> all_variants() {
  std::vector<Variant> variants = mma_sync_variants();
  for (const Variant& variant : hopper_variants()) variants.push_back(variant);
  for (const Variant& variant : cluster_variants()) variants.push_back(variant);
  for (const Variant& variant : tuning_variants()) variants.push_back(variant);
  for (const Variant& variant : configuration_variants()) variants.push_back(variant);
  return variants;
}

}  // namespace sweep

int main(int argc, char** argv) {
  std::string out_dir = "profiles/sweeps", commit = "unknown";
  std::vector<std::string> groups;
  std::vector<gemm::GemmProblem> shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {6144, 6144, 6144}};
  bool list = false, quick = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--list") {
        list = true;
        continue;
      }
      if (flag == "--quick") {
        quick = true;
        continue;
      }
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      const std::string value = argv[++i];
      if (flag == "--groups") groups = gemm::split_list(value);
      else if (flag == "--out-dir") out_dir = value;
      else if (flag == "--commit") commit = value;
      else if (flag == "--shapes") shapes = gemm::parse_shape_list(flag, value);
      else throw std::invalid_argument("unknown option '" + flag + "'");
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gemm_sweep: error: %s\n", error.what());
    std::fprintf(stderr, "usage: gemm_sweep [--groups g1,g2] [--shapes 4096,8192x8192x1024] [--out-dir DIR] "
                         "[--quick] [--commit SHA] [--list]\n");
    return gemm::kExitBadUsage;
  }

  // The variants of the chosen groups, grouped in order of first appearance.
  std::vector<std::string> group_order;
  std::map<std::string, std::vector<sweep::Variant>> by_group;
  for (const sweep::Variant& variant : sweep::all_variants()) {
    if (!groups.empty() && std::find(groups.begin(), groups.end(), variant.group) == groups.end())
      continue;
    if (by_group.find(variant.group) == by_group.end()) group_order.push_back(variant.group);
    by_group[variant.group].push_back(variant);
  }
  if (list || group_order.empty()) {
    for (const std::string& group : group_order)
      for (const sweep::Variant& variant : by_group[group])
        std::printf("%-18s %s%s\n", group.c_str(), variant.name.c_str(),
                    variant.is_default ? "  (the lesson's configuration)" : "");
    if (group_order.empty()) {
      std::fprintf(stderr, "gemm_sweep: error: no variant in the groups asked for (--list)\n");
      return gemm::kExitBadUsage;
    }
    return gemm::kExitPass;
  }

  if (const auto missing = gemm::missing_gpu()) {
    std::fprintf(stderr, "gemm_sweep: error: %s\n", missing->c_str());
    return gemm::kExitNoGpu;
  }

  try {
    gemm::LessonRunner runner(0);
    const std::string date = gemm::today_utc();
    // The protocol for a shape's first variant, and for the variants after it (the same unless
    // --quick, whose later variants find the clock warm).
    gemm::TimingOptions timing;  // the protocol's defaults: 30 pairs or more
    if (quick) {
      timing.pairs = 10;
      timing.min_timed_seconds = 0.03;
      timing.max_pairs = 100;
    }
    gemm::TimingOptions settled = timing;
    if (quick) {
      settled.warmup = 2;
      settled.warmup_seconds = 0.02;
    }
    bool all_passed = true;
    for (const std::string& group : group_order) {
      // Each row goes to the file as soon as it is measured (and flushed): a sweep stopped at a
      // time limit keeps every row it finished.
      const std::string path = out_dir + "/" + group + ".csv";
      std::ofstream csv(path);
      if (!csv) throw std::runtime_error("cannot write " + path);
      csv << "variant,default," << gemm::csv_header() << ",date,commit\n";
      for (const gemm::GemmProblem& shape : shapes) {
        runner.set_problem(shape, /*seed=*/1);
        bool first_at_shape = true;
        for (const sweep::Variant& variant : by_group[group]) {
          if (const auto reason = gemm::unsupported_reason(variant.lesson, runner.device())) {
            std::printf("%s skipped: %s\n", variant.name.c_str(), reason->c_str());
            continue;
          }
          const gemm::RunReport report =
              runner.check_and_time(variant.lesson, first_at_shape ? timing : settled);
          first_at_shape = false;
          all_passed = all_passed && report.check->passed();
          csv << '"' << variant.name << "\"," << (variant.is_default ? "yes" : "no") << ","
              << gemm::format_csv_row(report) << "," << date << "," << commit << std::endl;
          if (!csv) throw std::runtime_error("cannot write " + path);
          const bool timed = report.timing.timed();
          std::printf("%-16s %-40s %5lld x %5lld x %5lld %s %7.1f TFLOP/s  ratio %6.1f%%  %s\n",
                      group.c_str(), variant.name.c_str(), (long long)shape.m, (long long)shape.n,
                      (long long)shape.k, report.check->passed() ? "pass" : "FAIL",
                      timed ? report.lesson_tflops() : 0.0, timed ? 100 * report.timing.ratio : 0.0,
                      timed ? report.timing.clock.summary().c_str() : "");
          std::fflush(stdout);
        }
      }
      std::printf("wrote %s\n", path.c_str());
    }
    return all_passed ? gemm::kExitPass : gemm::kExitCheckFailed;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gemm_sweep: error: %s\n", error.what());
    return gemm::kExitCudaError;
  }
}
