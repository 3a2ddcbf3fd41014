#pragma once
// The GPU's SM clock, power draw and throttle reasons while something runs, read through NVML.
//
// Why the course records them: an H100 SXM at its 700 W limit is power-bound on large GEMMs. Its
// SM clock moves between about 1500 and 1980 MHz within one run, and a kernel timed at a lower
// clock looks slower than it is. Every timing result therefore prints the median SM clock and the
// peak power of the timed pairs, so a throttled run shows.
//
// NVML comes with the NVIDIA driver (libnvidia-ml.so.1). It is loaded at run time, not linked, so
// the course builds and runs where it is missing (a machine without the driver, or a build
// without nvml.h): the report then says "clock: n/a" and nothing fails.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gemm {

// One reading of the GPU's state.
struct ClockSample {
  double sm_mhz = 0;
  double power_w = 0;
  uint64_t throttle_reasons = 0;  // NVML's clocks-event reason bits
};

// What a ClockMonitor saw between start() and stop().
struct ClockReport {
  bool available = false;  // false: NVML is missing or failed; every other field is 0
  int samples = 0;
  double sm_mhz_median = 0, sm_mhz_min = 0, sm_mhz_max = 0;
  double power_w_median = 0, power_w_peak = 0;
  uint64_t throttle_reasons = 0;  // every reason seen in any sample (bitwise or)

  // "1755 MHz (1500-1980), peak 699 W, throttled by sw_power_cap" or "clock: n/a".
  std::string summary() const;
};

// Summarizes readings (pure, unit-tested): medians, extremes, the union of the reasons.
ClockReport summarize_clock_samples(const std::vector<ClockSample>& samples);

// The throttle reasons as names joined by '+', e.g. "sw_power_cap+hw_slowdown"; "none" for 0.
// The GPU idling and the application-clock setting are not reported: they do not slow a kernel
// that is running.
std::string throttle_reason_names(uint64_t reasons);

// Samples the GPU every `period_ms` milliseconds on a background thread.
class ClockMonitor {
 public:
  // The CUDA device to watch; NVML finds it by its PCI bus id.
  explicit ClockMonitor(int cuda_device, double period_ms = 5.0);
  ~ClockMonitor();
  ClockMonitor(const ClockMonitor&) = delete;
  ClockMonitor& operator=(const ClockMonitor&) = delete;

  bool available() const;
  // Starts sampling (takes one sample at once). Does nothing when NVML is unavailable.
  void start();
  // Stops sampling (takes one last sample) and summarizes everything since start().
  ClockReport stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gemm
