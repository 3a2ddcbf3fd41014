#include "common/harness/clock_monitor.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <type_traits>

#include <cuda_runtime_api.h>

#if GEMM_HAVE_NVML_HEADER
#include <dlfcn.h>
// The versioned names (nvmlInit_v2, ...) are the symbols the library exports: ask the header for
// exactly those, so that dlsym and the declarations agree.
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>
#endif

namespace gemm {
namespace {

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t count = values.size();
  return count % 2 == 1 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

// NVML's clocks-event (throttle) reason bits, as nvml.h defines them
// (nvmlClocksEventReasonSwPowerCap and friends).
struct ReasonName {
  uint64_t bit;
  const char* name;
};
constexpr ReasonName kReasonNames[] = {
    {0x4, "sw_power_cap"},    // the power limit: the usual one on a loaded H100
    {0x8, "hw_slowdown"},     // hardware slowdown (power brake or temperature)
    {0x10, "sync_boost"},     // held to another GPU's clock
    {0x20, "sw_thermal"},     // the driver's thermal limit
    {0x40, "hw_thermal"},     // the hardware's thermal limit
    {0x80, "hw_power_brake"}, // an external power brake signal
    {0x100, "display_clocks"},
};

}  // namespace

std::string throttle_reason_names(uint64_t reasons) {
  std::string names;
  for (const ReasonName& reason : kReasonNames)
    if (reasons & reason.bit) names += (names.empty() ? "" : "+") + std::string(reason.name);
  return names.empty() ? "none" : names;
}

ClockReport summarize_clock_samples(const std::vector<ClockSample>& samples) {
  ClockReport report;
  if (samples.empty()) return report;
  report.available = true;
  report.samples = int(samples.size());
  std::vector<double> clocks, powers;
  for (const ClockSample& sample : samples) {
    clocks.push_back(sample.sm_mhz);
    powers.push_back(sample.power_w);
    report.throttle_reasons |= sample.throttle_reasons;
  }
  report.sm_mhz_median = median_of(clocks);
  report.sm_mhz_min = *std::min_element(clocks.begin(), clocks.end());
  report.sm_mhz_max = *std::max_element(clocks.begin(), clocks.end());
  report.power_w_median = median_of(powers);
  report.power_w_peak = *std::max_element(powers.begin(), powers.end());
  return report;
}

std::string ClockReport::summary() const {
  if (!available) return "clock: n/a (NVML not available)";
  char line[160];
  std::snprintf(line, sizeof(line), "SM %.0f MHz median (%.0f-%.0f), power peak %.0f W, throttle: %s",
                sm_mhz_median, sm_mhz_min, sm_mhz_max, power_w_peak,
                throttle_reason_names(throttle_reasons).c_str());
  return line;
}

#if GEMM_HAVE_NVML_HEADER

// The few NVML functions the monitor uses, looked up in the driver's library.
struct Nvml {
  void* library = nullptr;
  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlShutdown) shutdown = nullptr;
  decltype(&nvmlDeviceGetHandleByPciBusId_v2) handle_by_pci_bus_id = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock_info = nullptr;
  decltype(&nvmlDeviceGetPowerUsage) power_usage = nullptr;
  // nvmlDeviceGetCurrentClocksEventReasons, called ...ThrottleReasons in older drivers: the same
  // signature under two names, so its type is written out rather than taken from the header.
  nvmlReturn_t (*throttle_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;

  // Loads the library and initializes NVML; on any failure leaves `library` null.
  Nvml() {
    library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
    const auto find = [&](auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library, name));
      return function != nullptr;
    };
    const bool found = find(init, "nvmlInit_v2") && find(shutdown, "nvmlShutdown") &&
                       find(handle_by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2") &&
                       find(clock_info, "nvmlDeviceGetClockInfo") &&
                       find(power_usage, "nvmlDeviceGetPowerUsage") &&
                       (find(throttle_reasons, "nvmlDeviceGetCurrentClocksEventReasons") ||
                        find(throttle_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    if (!found || init() != NVML_SUCCESS) {
      dlclose(library);
      library = nullptr;
    }
  }
  ~Nvml() {
    if (library) {
      shutdown();
      dlclose(library);
    }
  }
};

struct ClockMonitor::State {
  Nvml nvml;
  nvmlDevice_t device{};
  bool available = false;
  double period_ms = 5.0;

  std::mutex mutex;  // guards samples
  std::vector<ClockSample> samples;
  std::atomic<bool> running{false};
  std::thread sampler;

  void take_sample() {
    ClockSample sample;
    unsigned int mhz = 0, milliwatts = 0;
    unsigned long long reasons = 0;
    // A reading that fails is left out rather than recorded as zero.
    if (nvml.clock_info(device, NVML_CLOCK_SM, &mhz) != NVML_SUCCESS) return;
    if (nvml.power_usage(device, &milliwatts) != NVML_SUCCESS) return;
    if (nvml.throttle_reasons(device, &reasons) != NVML_SUCCESS) reasons = 0;
    sample.sm_mhz = mhz;
    sample.power_w = milliwatts / 1000.0;
    sample.throttle_reasons = reasons;
    std::lock_guard<std::mutex> lock(mutex);
    samples.push_back(sample);
  }
};

ClockMonitor::ClockMonitor(int cuda_device, double period_ms) : state_(std::make_unique<State>()) {
  state_->period_ms = period_ms;
  if (!state_->nvml.library) return;
  char pci_bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(pci_bus_id, sizeof(pci_bus_id), cuda_device) != cudaSuccess) return;
  state_->available =
      state_->nvml.handle_by_pci_bus_id(pci_bus_id, &state_->device) == NVML_SUCCESS;
}

#else  // no nvml.h at build time: the monitor is never available

struct ClockMonitor::State {
  bool available = false;
  std::atomic<bool> running{false};
  std::thread sampler;
  std::mutex mutex;
  std::vector<ClockSample> samples;
  double period_ms = 5.0;
  void take_sample() {}
};

ClockMonitor::ClockMonitor(int, double period_ms) : state_(std::make_unique<State>()) {
  state_->period_ms = period_ms;
}

#endif

ClockMonitor::~ClockMonitor() {
  if (state_->running) stop();
}

bool ClockMonitor::available() const { return state_->available; }

void ClockMonitor::start() {
  if (!state_->available || state_->running) return;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->samples.clear();
  }
  state_->take_sample();
  state_->running = true;
  state_->sampler = std::thread([state = state_.get()] {
    while (state->running) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(state->period_ms));
      state->take_sample();
    }
  });
}

ClockReport ClockMonitor::stop() {
  if (!state_->running) return ClockReport{};
  state_->running = false;
  state_->sampler.join();
  state_->take_sample();
  std::lock_guard<std::mutex> lock(state_->mutex);
  return summarize_clock_samples(state_->samples);
}

}  // namespace gemm
