#include <algorithm>
#include <stdexcept>

#include "common/timing.hpp"

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

}  // namespace gemm
