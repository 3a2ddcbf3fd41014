// Lesson 16's cost model against the oracle: for every shape of the oracle sweep (every
// configuration timed against cuBLAS, profiles/sweeps/configs_16.csv, written by
// `make sweep GROUPS=configs_16 SHAPES=standard,workloads`), the configuration the model picks,
// the best one measured, and what the pick loses. Runs on the host alone: the model is a pure function of the shape.
//
//   shape_model_report --csv profiles/sweeps/configs_16.csv [--sms 132]
//   shape_model_report --csv profiles/sweeps/configs_16.csv --fit
//   shape_model_report --csv profiles/sweeps/configs_16_h200.csv --dram-bytes-per-ns 4188
//   shape_model_report --csv profiles/sweeps/configs_16_h200.csv --dram-bytes-per-ns 4188
//       --points estimates.csv
//
// The shapes of the course's standard sweep are the ones the model's costs were fitted on; every
// other shape of the file is held out, and reported separately. --fit searches a grid of the three
// costs that decide most picks (L2 bytes per ns per SM, the cost per work item and per Stream-K
// unit, against the tensor cores' rate) for the fewest lost percent on the fitted shapes (the
// first of equal ones, in the order of the grid), and prints it.
//
// --dram-bytes-per-ns replaces the H100's DRAM rate, as the lesson's costs_on_this_gpu() does on the
// GPU it runs on (kDramShareReached of the peak the GPU reports: 4188 on the H200), so that an
// oracle swept on another GPU is judged with the picks the lesson makes there.
//
// --points FILE also writes, for every configuration the model weighs at every shape of the oracle,
// the model's estimate next to the measured median time (profiles/model_svg.py draws them).
//
// The comparison uses each configuration's paired ratio to cuBLAS (measured with its own pairs),
// so that the clock of each configuration's run cancels out: loss = 1 - ratio(pick) / ratio(best).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/shape_sets.hpp"
#include "common/schedule/kernel_shape.hpp"
#include "common/schedule/shape_model.hpp"
#include "lessons/registry.hpp"

namespace {

using gemm::GemmProblem;

struct Shape {
  GemmProblem problem;
  bool fitted = false;
  std::map<std::string, double> ratio;  // configuration -> paired ratio to cuBLAS
  std::map<std::string, double> median_ms;  // configuration -> its median time
};

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) {
      cells.push_back(cell);
      cell.clear();
    } else cell += c;
  }
  cells.push_back(cell);
  return cells;
}

// The plain-product rows of the oracle CSV, by shape, in the order of the file.
std::vector<Shape> read_oracle(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read " + path);
  std::string line;
  std::getline(file, line);
  const std::vector<std::string> header = split_csv_line(line);
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  for (const char* name : {"variant", "m", "n", "k", "ratio", "check", "lesson_median_ms"})
    if (!column.count(name)) throw std::runtime_error(path + ": no column '" + name + "'");
  std::vector<Shape> shapes;
  while (std::getline(file, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = split_csv_line(line);
    if (cells.size() != header.size()) throw std::runtime_error(path + ": a row of the wrong length");
    if (cells[column["check"]] != "pass" || cells[column["ratio"]].empty())
      throw std::runtime_error(path + ": " + cells[column["variant"]] + " failed its check");
    const GemmProblem problem{std::stoll(cells[column["m"]]), std::stoll(cells[column["n"]]),
                              std::stoll(cells[column["k"]])};
    Shape* shape = nullptr;
    for (Shape& known : shapes)
      if (known.problem.m == problem.m && known.problem.n == problem.n && known.problem.k == problem.k)
        shape = &known;
    if (!shape) {
      shapes.push_back(Shape{problem, false, {}, {}});
      shape = &shapes.back();
      for (const GemmProblem& fitted : gemm::standard_sweep())
        shape->fitted = shape->fitted || (fitted.m == problem.m && fitted.n == problem.n &&
                                          fitted.k == problem.k);
    }
    shape->ratio[cells[column["variant"]]] = std::stod(cells[column["ratio"]]);
    shape->median_ms[cells[column["variant"]]] = std::stod(cells[column["lesson_median_ms"]]);
  }
  return shapes;
}

// The configurations the model weighs for a problem, each with the schedule it would run on its
// resident clusters on `sms` SMs.
struct Candidates {
  std::vector<int> configurations;  // indices of lesson 16's configurations
  std::vector<gemm::KernelShape> shapes;
  std::vector<gemm::StreamKPlan> schedules;
};

Candidates weighed_candidates(const GemmProblem& problem, int sms) {
  const gemm::Lesson& lesson = gemm::lessons::lesson16();
  Candidates candidates;
  for (int i = 0; i < lesson.configuration_count; ++i) {
    const gemm::Configuration& configuration = lesson.configurations[i];
    if (!configuration.weighed) continue;
    candidates.configurations.push_back(i);
    candidates.shapes.push_back(configuration.shape);
    candidates.schedules.push_back(gemm::plan_schedule(configuration.shape, problem,
                                                       sms / configuration.shape.cluster_m));
  }
  return candidates;
}

// The model's pick for a problem: an index of lesson 16's configurations.
int pick(const Candidates& candidates, const GemmProblem& problem,
         const gemm::taught::MachineCosts& costs) {
  return candidates.configurations[gemm::taught::choose_configuration(
      candidates.shapes.data(), candidates.schedules.data(),
      int(candidates.configurations.size()), problem, costs)];
}

int pick(const GemmProblem& problem, int sms, const gemm::taught::MachineCosts& costs) {
  return pick(weighed_candidates(problem, sms), problem, costs);
}

// The model's estimate and the measured time of every weighed configuration the oracle timed, one
// CSV row each.
void write_points(const std::vector<Shape>& shapes, int sms, const gemm::taught::MachineCosts& costs,
                  const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << "m,n,k,set,configuration,picked,estimate_us,measured_us\n";
  const gemm::Lesson& lesson = gemm::lessons::lesson16();
  for (const Shape& shape : shapes) {
    const Candidates candidates = weighed_candidates(shape.problem, sms);
    const int picked = pick(candidates, shape.problem, costs);
    for (size_t c = 0; c < candidates.configurations.size(); ++c) {
      const int index = candidates.configurations[c];
      const gemm::Configuration& configuration = lesson.configurations[index];
      const auto measured = shape.median_ms.find(configuration.name);
      if (measured == shape.median_ms.end()) continue;
      const double estimate_ns = gemm::taught::estimate_ns(candidates.shapes[c],
                                                           candidates.schedules[c], shape.problem,
                                                           costs);
      char row[256];
      std::snprintf(row, sizeof(row), "%lld,%lld,%lld,%s,%s,%s,%.3f,%.3f\n",
                    (long long)shape.problem.m, (long long)shape.problem.n,
                    (long long)shape.problem.k, shape.fitted ? "fitted" : "held out",
                    configuration.name, index == picked ? "yes" : "no",
                    estimate_ns / 1e3, measured->second * 1e3);
      out << row;
    }
  }
}

struct Verdict {
  std::string picked, best;
  bool picked_measured = false;  // a shape swept before a configuration was added may lack its row
  double picked_ratio = 0, best_ratio = 0;
  double loss() const { return 1.0 - picked_ratio / best_ratio; }
};

Verdict judge(const Shape& shape, int sms, const gemm::taught::MachineCosts& costs) {
  Verdict verdict;
  verdict.picked = gemm::lessons::lesson16().configurations[pick(shape.problem, sms, costs)].name;
  for (const auto& [name, ratio] : shape.ratio)
    if (ratio > verdict.best_ratio) {
      verdict.best = name;
      verdict.best_ratio = ratio;
    }
  const auto measured = shape.ratio.find(verdict.picked);
  verdict.picked_measured = measured != shape.ratio.end();
  if (verdict.picked_measured) verdict.picked_ratio = measured->second;
  return verdict;
}

std::string shape_name(const GemmProblem& p) {
  return std::to_string(p.m) + " x " + std::to_string(p.n) + " x " + std::to_string(p.k);
}

// Lost percent summed over the fitted shapes.
double fitted_loss(const std::vector<Shape>& shapes, int sms, const gemm::taught::MachineCosts& costs) {
  double loss = 0;
  for (const Shape& shape : shapes) {
    if (!shape.fitted) continue;
    const Verdict v = judge(shape, sms, costs);
    if (!v.picked_measured)
      throw std::runtime_error("the oracle has no row of " + v.picked + " at the fitted shape " +
                               shape_name(shape.problem));
    loss += v.loss();
  }
  return loss;
}

void report(const std::vector<Shape>& shapes, int sms, const gemm::taught::MachineCosts& costs) {
  std::printf("| shape (M x N x K) | set | model's pick | best measured | loss | pick / cuBLAS | best / cuBLAS |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const bool fitted : {true, false}) {
    double log_picked = 0, log_best = 0, worst = 1e9;
    int count = 0, within_3 = 0, unmeasured = 0;
    for (const Shape& shape : shapes) {
      if (shape.fitted != fitted) continue;
      const Verdict v = judge(shape, sms, costs);
      const char* set = fitted ? "fitted" : "held out";
      if (!v.picked_measured) {
        std::printf("| %s | %s | %s | %s | not measured | | %.3f |\n", shape_name(shape.problem).c_str(),
                    set, v.picked.c_str(), v.best.c_str(), v.best_ratio);
        ++unmeasured;
        continue;
      }
      std::printf("| %s | %s | %s | %s | %.1f%% | %.3f | %.3f |\n", shape_name(shape.problem).c_str(),
                  set, v.picked.c_str(), v.best.c_str(), 100 * v.loss(), v.picked_ratio,
                  v.best_ratio);
      log_picked += std::log(v.picked_ratio);
      log_best += std::log(v.best_ratio);
      worst = std::min(worst, v.picked_ratio);
      within_3 += v.loss() <= 0.03;
      ++count;
    }
    if (count > 0)
      std::fprintf(stderr,
                   "%s shapes: %d; geometric mean of the pick %.3f of cuBLAS (best configuration "
                   "%.3f), lowest %.3f; pick within 3%% of the best on %d of %d\n",
                   fitted ? "fitted" : "held-out", count, std::exp(log_picked / count),
                   std::exp(log_best / count), worst, within_3, count);
    if (unmeasured > 0)
      std::fprintf(stderr, "%s shapes left out, their pick not in the oracle: %d\n",
                   fitted ? "fitted" : "held-out", unmeasured);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv_path, points_path;
  int sms = 132;
  bool fit = false;
  gemm::taught::MachineCosts costs = gemm::taught::kH100Costs;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--fit") {
        fit = true;
        continue;
      }
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      const std::string value = argv[++i];
      if (flag == "--csv") csv_path = value;
      else if (flag == "--points") points_path = value;
      else if (flag == "--sms") sms = int(gemm::parse_integer(flag, value, 2, 1024));
      else if (flag == "--dram-bytes-per-ns")
        costs.dram_bytes_per_ns = double(gemm::parse_integer(flag, value, 1, 1000000));
      else throw std::invalid_argument("unknown option '" + flag + "'");
    }
    if (csv_path.empty()) throw std::invalid_argument("--csv FILE is required");
  } catch (const std::exception& error) {
    std::fprintf(stderr, "shape_model_report: error: %s\n", error.what());
    std::fprintf(stderr, "usage: shape_model_report --csv FILE [--sms 132] [--dram-bytes-per-ns B] "
                         "[--points FILE] [--fit]\n");
    return gemm::kExitBadUsage;
  }
  try {
    const std::vector<Shape> shapes = read_oracle(csv_path);
    if (!fit) {
      report(shapes, sms, costs);
      if (!points_path.empty()) write_points(shapes, sms, costs, points_path);
      return gemm::kExitPass;
    }
    gemm::taught::MachineCosts best = costs;
    double best_loss = fitted_loss(shapes, sms, best);
    for (double l2 = 30; l2 <= 120; l2 += 2)
      for (double item = 0; item <= 3000; item += 100)
        for (double unit = 0; unit <= 10000; unit += 250) {
          gemm::taught::MachineCosts candidate = costs;
          candidate.l2_bytes_per_ns_per_sm = l2;
          candidate.item_ns = item;
          candidate.stream_k_unit_ns = unit;
          const double loss = fitted_loss(shapes, sms, candidate);
          if (loss < best_loss - 1e-12) {
            best = candidate;
            best_loss = loss;
          }
        }
    std::printf("fitted: l2_bytes_per_ns_per_sm = %.0f, item_ns = %.0f, stream_k_unit_ns = %.0f: "
                "%.2f lost percent over the fitted shapes (the costs in the lesson: %.2f)\n",
                best.l2_bytes_per_ns_per_sm, best.item_ns, best.stream_k_unit_ns, 100 * best_loss,
                100 * fitted_loss(shapes, sms, costs));
    return gemm::kExitPass;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "shape_model_report: error: %s\n", error.what());
    return gemm::kExitBadUsage;
  }
}
