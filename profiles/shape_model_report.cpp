// Lesson 16's cost model against the oracle: for every shape of the oracle sweep (every
// configuration timed against cuBLAS, profiles/sweeps/configs_16.csv, written by
// `make sweep GROUPS=configs_16 SHAPES=standard,held_out,workloads QUICK=1`), the configuration the
// model picks, the best one measured, and what the pick loses. Runs on the host alone: the model
// is a pure function of the shape.
//
//   shape_model_report --csv profiles/sweeps/configs_16.csv [--sms 132]
//   shape_model_report --csv profiles/sweeps/configs_16.csv --fit
//   shape_model_report --csv profiles/sweeps/configs_16_h200.csv --gpu h200 [--fit]
//   shape_model_report --csv profiles/sweeps/configs_16_h200.csv --gpu h200 --points estimates.csv
//
// The shapes of the course's standard sweep and workload set are the ones the model's costs are
// fitted on; every other shape of the file (the held-out set, common/harness/shape_sets.hpp) is held out,
// and reported separately. Rows of configurations that the table no longer has are left out.
//
// --fit fits seven of the costs (all but the DRAM rate, which the lesson reads from the GPU, and the
// overlap power) to the measured times of every configuration at every fitted shape, and prints
// them. The measured time of a configuration is the shape's cuBLAS time over the configuration's
// paired ratio (which cancels the clock of its own run). The fit minimizes the mean squared log
// error of the estimates, each weighted by how close the configuration came to the shape's best,
// exp(-(t / t_best - 1) / 0.1): the model must rank the contenders, and need not know how slow the
// hopeless ones are. The minimizer is Nelder and Mead's simplex, on the logarithms of the costs
// (they stay positive), started from the lesson's costs and restarted until it stops improving.
// It exits with 1 when the lesson's costs are more than 1% worse than the fit (the ctest
// profiles.model_fit_h100 and _h200: the costs in the lesson are each oracle's fit).
//
// --gpu h100|h200 says which of the lesson's costs the oracle is judged with (kH100Costs, the default,
// or kH200Costs): those the lesson's costs_on_this_gpu() takes on that GPU. --dram-bytes-per-ns
// replaces their DRAM rate (what the lesson reads from a GPU of another memory).
//
// --points FILE also writes, for every configuration the model weighs at every shape of the oracle,
// the model's estimate next to the measured median time (profiles/model_svg.py draws them).
//
// The comparison uses each configuration's paired ratio to cuBLAS (measured with its own pairs),
// so that the clock of each configuration's run cancels out: loss = 1 - ratio(pick) / ratio(best).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/harness/cli.hpp"
#include "common/harness/shape_sets.hpp"
#include "common/harness/timing.hpp"
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
  std::vector<double> reference_ms;         // cuBLAS's median time in each configuration's run
  double reference_median_ms = 0;           // ... and the median of those

  // A configuration's time with the clock of its run cancelled: the shape's cuBLAS time over the
  // configuration's paired ratio.
  double clock_free_ms(const std::string& configuration) const {
    return reference_median_ms / ratio.at(configuration);
  }
};

bool same_shape(const GemmProblem& a, const GemmProblem& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k;
}

bool in_table(const std::string& name) {
  const gemm::Lesson& lesson = gemm::lessons::lesson16();
  for (int i = 0; i < lesson.configuration_count; ++i)
    if (name == lesson.configurations[i].name) return true;
  return false;
}

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
  for (const char* name :
       {"variant", "m", "n", "k", "ratio", "check", "lesson_median_ms", "reference_median_ms"})
    if (!column.count(name)) throw std::runtime_error(path + ": no column '" + name + "'");
  std::vector<Shape> shapes;
  while (std::getline(file, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = split_csv_line(line);
    if (cells.size() != header.size()) throw std::runtime_error(path + ": a row of the wrong length");
    if (cells[column["check"]] != "pass" || cells[column["ratio"]].empty())
      throw std::runtime_error(path + ": " + cells[column["variant"]] + " failed its check");
    const std::string name = cells[column["variant"]];
    if (!in_table(name)) continue;
    const GemmProblem problem{std::stoll(cells[column["m"]]), std::stoll(cells[column["n"]]),
                              std::stoll(cells[column["k"]])};
    Shape* shape = nullptr;
    for (Shape& known : shapes)
      if (same_shape(known.problem, problem)) shape = &known;
    if (!shape) {
      shapes.push_back(Shape{problem, false, {}, {}, {}, 0});
      shape = &shapes.back();
      for (const auto* set : {&gemm::standard_sweep(), &gemm::workload_set()})
        for (const GemmProblem& fitted : *set)
          shape->fitted = shape->fitted || same_shape(fitted, problem);
    }
    shape->ratio[name] = std::stod(cells[column["ratio"]]);
    shape->median_ms[name] = std::stod(cells[column["lesson_median_ms"]]);
    shape->reference_ms.push_back(std::stod(cells[column["reference_median_ms"]]));
  }
  for (Shape& shape : shapes)
    shape.reference_median_ms = gemm::summarize_samples(shape.reference_ms).median_ms;
  return shapes;
}

// The configurations of lesson 16's table, each with the schedule it would run on a problem on its
// resident clusters on `sms` SMs.
struct Candidates {
  std::vector<int> configurations;  // indices of lesson 16's configurations
  std::vector<gemm::KernelShape> shapes;
  std::vector<gemm::StreamKPlan> schedules;
};

Candidates all_candidates(const GemmProblem& problem, int sms) {
  const gemm::Lesson& lesson = gemm::lessons::lesson16();
  Candidates candidates;
  for (int i = 0; i < lesson.configuration_count; ++i) {
    const gemm::Configuration& configuration = lesson.configurations[i];
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
  return pick(all_candidates(problem, sms), problem, costs);
}

// The configurations of the table that the oracle timed at a shape, each with the model's estimate
// on its schedule.
struct Estimate {
  int configuration;  // an index of lesson 16's configurations
  const char* name;
  double estimate_ns;
};
std::vector<Estimate> measured_estimates(const Shape& shape, const Candidates& candidates,
                                         const gemm::taught::MachineCosts& costs) {
  std::vector<Estimate> estimates;
  for (size_t c = 0; c < candidates.configurations.size(); ++c) {
    const int index = candidates.configurations[c];
    const char* name = gemm::lessons::lesson16().configurations[index].name;
    if (!shape.ratio.count(name)) continue;
    estimates.push_back({index, name,
                         gemm::taught::estimate_ns(candidates.shapes[c], candidates.schedules[c],
                                                   shape.problem, costs)});
  }
  return estimates;
}

// The model's estimate and the measured time of every configuration the oracle timed, one CSV row
// each.
void write_points(const std::vector<Shape>& shapes, int sms, const gemm::taught::MachineCosts& costs,
                  const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << "m,n,k,set,configuration,picked,estimate_us,measured_us\n";
  for (const Shape& shape : shapes) {
    const Candidates candidates = all_candidates(shape.problem, sms);
    const int picked = pick(candidates, shape.problem, costs);
    for (const Estimate& estimate : measured_estimates(shape, candidates, costs)) {
      char row[256];
      std::snprintf(row, sizeof(row), "%lld,%lld,%lld,%s,%s,%s,%.3f,%.3f\n",
                    (long long)shape.problem.m, (long long)shape.problem.n,
                    (long long)shape.problem.k, shape.fitted ? "fitted" : "held out",
                    estimate.name, estimate.configuration == picked ? "yes" : "no",
                    estimate.estimate_ns / 1e3, shape.median_ms.at(estimate.name) * 1e3);
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

// The fit's loss: over every configuration at every fitted shape, the squared log error of the
// estimate against the clock-free measured time, weighted by how close the configuration came to
// the shape's best (the header says why).
double fit_loss(const std::vector<Shape>& shapes, int sms, const gemm::taught::MachineCosts& costs) {
  constexpr double kCloseness = 0.1;
  double weighted = 0, weights = 0;
  for (const Shape& shape : shapes) {
    if (!shape.fitted) continue;
    double best_ms = 1e300;
    for (const auto& [name, ratio] : shape.ratio)
      best_ms = std::min(best_ms, shape.clock_free_ms(name));
    for (const Estimate& estimate :
         measured_estimates(shape, all_candidates(shape.problem, sms), costs)) {
      const double measured_ms = shape.clock_free_ms(estimate.name);
      const double estimate_ms = estimate.estimate_ns / 1e6;
      const double weight = std::exp(-(measured_ms / best_ms - 1) / kCloseness);
      const double error = std::log(estimate_ms / measured_ms);
      weighted += weight * error * error;
      weights += weight;
    }
  }
  if (weights == 0) throw std::runtime_error("the oracle has no fitted shape");
  return weighted / weights;
}

// The costs --fit fits, as the logarithms the simplex moves; the DRAM rate and the overlap power
// stay as given.
constexpr int kFitted = 8;
using FitPoint = std::array<double, kFitted>;
double* fitted_cost(gemm::taught::MachineCosts& costs, int i) {
  double* fields[kFitted] = {&costs.macs_per_ns_per_sm, &costs.wgmma_extra_columns,
                             &costs.l2_bytes_per_ns_per_sm, &costs.load_latency_ns,
                             &costs.launch_ns, &costs.subtile_ns, &costs.stream_k_unit_ns,
                             &costs.last_wave_speedup};
  return fields[i];
}
gemm::taught::MachineCosts costs_at(gemm::taught::MachineCosts costs, const FitPoint& point) {
  for (int i = 0; i < kFitted; ++i) *fitted_cost(costs, i) = std::exp(point[i]);
  return costs;
}

// Nelder and Mead's simplex: kFitted + 1 points, the worst of which is reflected through the
// others' centroid, then expanded, contracted, or the whole simplex shrunk towards the best,
// until the spread of the losses is below `tolerance`.
FitPoint minimize(const std::function<double(const FitPoint&)>& loss, const FitPoint& start,
                  double step, double tolerance, int most_evaluations) {
  std::vector<FitPoint> points(kFitted + 1, start);
  for (int i = 0; i < kFitted; ++i) points[i + 1][i] += step;
  std::vector<double> losses;
  for (const FitPoint& point : points) losses.push_back(loss(point));
  int evaluations = kFitted + 1;
  while (evaluations < most_evaluations) {
    std::vector<int> order(points.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return losses[a] < losses[b]; });
    const int best = order.front(), worst = order.back(), second_worst = order[order.size() - 2];
    if (losses[worst] - losses[best] <= tolerance * (std::fabs(losses[best]) + 1e-30)) break;
    FitPoint centroid{};
    for (int i : order)
      if (i != worst)
        for (int d = 0; d < kFitted; ++d) centroid[d] += points[i][d] / kFitted;
    auto along = [&](double t) {  // centroid + t (centroid - worst)
      FitPoint point;
      for (int d = 0; d < kFitted; ++d) point[d] = centroid[d] + t * (centroid[d] - points[worst][d]);
      return point;
    };
    const FitPoint reflected = along(1.0);
    const double reflected_loss = loss(reflected);
    ++evaluations;
    if (reflected_loss < losses[best]) {
      const FitPoint expanded = along(2.0);
      const double expanded_loss = loss(expanded);
      ++evaluations;
      points[worst] = expanded_loss < reflected_loss ? expanded : reflected;
      losses[worst] = std::min(expanded_loss, reflected_loss);
    } else if (reflected_loss < losses[second_worst]) {
      points[worst] = reflected;
      losses[worst] = reflected_loss;
    } else {
      const FitPoint contracted = along(reflected_loss < losses[worst] ? 0.5 : -0.5);
      const double contracted_loss = loss(contracted);
      ++evaluations;
      if (contracted_loss < std::min(losses[worst], reflected_loss)) {
        points[worst] = contracted;
        losses[worst] = contracted_loss;
      } else {
        for (int i : order) {
          if (i == best) continue;
          for (int d = 0; d < kFitted; ++d)
            points[i][d] = points[best][d] + 0.5 * (points[i][d] - points[best][d]);
          losses[i] = loss(points[i]);
          ++evaluations;
        }
      }
    }
  }
  return points[size_t(std::min_element(losses.begin(), losses.end()) - losses.begin())];
}

gemm::taught::MachineCosts fit_costs(const std::vector<Shape>& shapes, int sms,
                                     const gemm::taught::MachineCosts& start) {
  auto loss = [&](const FitPoint& point) { return fit_loss(shapes, sms, costs_at(start, point)); };
  gemm::taught::MachineCosts initial = start;
  FitPoint point;
  for (int i = 0; i < kFitted; ++i) point[i] = std::log(*fitted_cost(initial, i));
  // Restarts with simplexes of three sizes, a cost changing by a factor of e^0.8 (2.2), e^0.3 and
  // e^0.1 along each axis: a large one steps out of the flat regions (a cost whose term is the
  // largest for no configuration moves no estimate), the small ones settle. Until a round of the
  // three improves the loss by less than a millionth.
  double previous = loss(point);
  for (int round = 0; round < 20; ++round) {
    for (const double step : {0.8, 0.3, 0.1}) point = minimize(loss, point, step, 1e-9, 4000);
    const double now = loss(point);
    if (previous - now <= 1e-6 * previous) break;
    previous = now;
  }
  return costs_at(start, point);
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

// The lesson's fitted costs of each GPU, by the name --gpu takes.
struct LessonCosts {
  const char* gpu;
  const char* name;
  gemm::taught::MachineCosts costs;
};
constexpr LessonCosts kLessonCosts[] = {{"h100", "kH100Costs", gemm::taught::kH100Costs},
                                        {"h200", "kH200Costs", gemm::taught::kH200Costs}};
const LessonCosts* lesson_costs_of(const std::string& gpu) {
  for (const LessonCosts& entry : kLessonCosts)
    if (gpu == entry.gpu) return &entry;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv_path, points_path;
  int sms = 132;
  bool fit = false;
  gemm::taught::MachineCosts costs = gemm::taught::kH100Costs;
  const char* costs_name = "kH100Costs";
  double dram_bytes_per_ns = 0;  // 0: the chosen costs' own
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
        dram_bytes_per_ns = double(gemm::parse_integer(flag, value, 1, 1000000));
      else if (flag == "--gpu") {
        const LessonCosts* chosen = lesson_costs_of(value);
        if (!chosen) throw std::invalid_argument("--gpu must be h100 or h200, got '" + value + "'");
        costs = chosen->costs;
        costs_name = chosen->name;
      }
      else throw std::invalid_argument("unknown option '" + flag + "'");
    }
    if (csv_path.empty()) throw std::invalid_argument("--csv FILE is required");
    if (dram_bytes_per_ns > 0) costs.dram_bytes_per_ns = dram_bytes_per_ns;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "shape_model_report: error: %s\n", error.what());
    std::fprintf(stderr, "usage: shape_model_report --csv FILE [--gpu h100|h200] [--sms 132] "
                         "[--dram-bytes-per-ns B] [--points FILE] [--fit]\n");
    return gemm::kExitBadUsage;
  }
  try {
    const std::vector<Shape> shapes = read_oracle(csv_path);
    costs.sms = sms;
    if (!fit) {
      report(shapes, sms, costs);
      if (!points_path.empty()) write_points(shapes, sms, costs, points_path);
      return gemm::kExitPass;
    }
    const gemm::taught::MachineCosts fitted = fit_costs(shapes, sms, costs);
    std::printf("fitted (loss %.5f; the lesson's costs: %.5f):\n", fit_loss(shapes, sms, fitted),
                fit_loss(shapes, sms, costs));
    std::printf("    .macs_per_ns_per_sm = %.0f,\n    .wgmma_extra_columns = %.1f,\n"
                "    .l2_bytes_per_ns_per_sm = %.1f,\n    .load_latency_ns = %.0f,\n"
                "    .launch_ns = %.0f,\n    .subtile_ns = %.1f,\n    .stream_k_unit_ns = %.0f,\n"
                "    .last_wave_speedup = %.2f,\n",
                fitted.macs_per_ns_per_sm, fitted.wgmma_extra_columns,
                fitted.l2_bytes_per_ns_per_sm, fitted.load_latency_ns, fitted.launch_ns,
                fitted.subtile_ns, fitted.stream_k_unit_ns, fitted.last_wave_speedup);
    report(shapes, sms, fitted);
    // The lesson's costs must be the fit of the committed oracle (rounded): a model or an oracle
    // that changed without a refit fails here (the ctests profiles.model_fit_<gpu>).
    if (fit_loss(shapes, sms, costs) > 1.01 * fit_loss(shapes, sms, fitted)) {
      std::fprintf(stderr, "shape_model_report: the lesson's costs are not this oracle's fit: "
                           "put the fitted costs above into %s\n", costs_name);
      return gemm::kExitCheckFailed;
    }
    return gemm::kExitPass;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "shape_model_report: error: %s\n", error.what());
    return gemm::kExitBadUsage;
  }
}
