#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/harness/timing.hpp"

namespace gemm {

TimingStats summarize_samples(std::vector<double> samples_ms) {
  if (samples_ms.empty()) throw std::invalid_argument("summarize_samples: no samples");
  std::sort(samples_ms.begin(), samples_ms.end());
  const size_t count = samples_ms.size();
  TimingStats stats;
  stats.samples = int(count);
  stats.min_ms = samples_ms.front();
  stats.max_ms = samples_ms.back();
  stats.median_ms = count % 2 == 1 ? samples_ms[count / 2]
                                   : 0.5 * (samples_ms[count / 2 - 1] + samples_ms[count / 2]);
  return stats;
}

PairedTiming summarize_pairs(const std::vector<double>& lesson_ms,
                             const std::vector<double>& reference_ms) {
  if (lesson_ms.empty() || lesson_ms.size() != reference_ms.size())
    throw std::invalid_argument("summarize_pairs: needs the same number (>= 1) of samples per side");
  std::vector<double> ratios(lesson_ms.size());
  for (size_t i = 0; i < lesson_ms.size(); ++i) ratios[i] = reference_ms[i] / lesson_ms[i];
  PairedTiming timing;
  timing.lesson = summarize_samples(lesson_ms);
  timing.reference = summarize_samples(reference_ms);
  const TimingStats ratio = summarize_samples(ratios);
  timing.ratio = ratio.median_ms;  // a ratio, not a time: summarize_samples only sorts and picks
  timing.ratio_min = ratio.min_ms;
  timing.ratio_max = ratio.max_ms;
  timing.pairs = int(lesson_ms.size());
  return timing;
}

int planned_pairs(const TimingOptions& options, double pair_ms, double lesson_ms) {
  int pairs = options.pairs;
  // Small shapes: more pairs, so the median rests on enough GPU time to be stable.
  if (lesson_ms > 0 && options.min_timed_seconds > 0) {
    const double wanted = std::ceil(options.min_timed_seconds * 1e3 / lesson_ms);
    pairs = int(std::min<double>(std::max<double>(pairs, wanted), std::max(options.max_pairs, pairs)));
  }
  // Slow lessons in the benchmark: fewer pairs, at least 3.
  if (options.max_total_seconds > 0 && pair_ms > 0) {
    const double affordable = std::floor(options.max_total_seconds * 1e3 / pair_ms);
    pairs = int(std::max<double>(std::min<double>(pairs, affordable), std::min(3, options.pairs)));
  }
  return pairs;
}

}  // namespace gemm
