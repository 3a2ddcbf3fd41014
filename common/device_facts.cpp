#include "common/device_facts.hpp"

#include <stdexcept>

#include "common/cuda_check.hpp"

namespace gemm {

namespace {
int attribute(cudaDeviceAttr which, int ordinal) {
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, which, ordinal));
  return value;
}
}  // namespace

DeviceFacts query_device_facts(int ordinal) {
  // The name and the memory size have no attribute; every other fact is read as an attribute,
  // the only place CUDA 13 still reports the clocks.
  cudaDeviceProp properties;
  CUDA_CHECK(cudaGetDeviceProperties(&properties, ordinal));
  DeviceFacts facts;
  facts.name = properties.name;
  facts.global_memory_bytes = int64_t(properties.totalGlobalMem);
  facts.compute_capability_major = attribute(cudaDevAttrComputeCapabilityMajor, ordinal);
  facts.compute_capability_minor = attribute(cudaDevAttrComputeCapabilityMinor, ordinal);
  facts.sm_count = attribute(cudaDevAttrMultiProcessorCount, ordinal);
  facts.l2_cache_bytes = attribute(cudaDevAttrL2CacheSize, ordinal);
  facts.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  facts.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, ordinal);
  facts.max_sm_clock_khz = attribute(cudaDevAttrClockRate, ordinal);
  facts.shared_memory_per_block_optin_bytes =
      attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal);
  facts.shared_memory_per_sm_bytes =
      attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, ordinal);
  facts.cluster_launch = attribute(cudaDevAttrClusterLaunch, ordinal) != 0;
  return facts;
}

double theoretical_dram_bytes_per_second(int64_t memory_clock_khz, int memory_bus_width_bits) {
  // The factor 2 (two transfers per reported clock), checked against our H200: it reports a
  // 3201 MHz memory clock on a 6016-bit bus, and 2 x 3201e6 x 6016 / 8 = 4.814e12 bytes/s is
  // NVIDIA's 4.8 TB/s; a factor of 1 would give half of that, 4 twice. No correction toward a
  // datasheet is applied: if a GPU's reported clock and bus do not give its datasheet figure, this
  // shows the difference, and the course's bandwidth is the one measured by a copy (make device).
  constexpr double kTransfersPerClock = 2.0;
  return kTransfersPerClock * double(memory_clock_khz) * 1e3 * double(memory_bus_width_bits) / 8.0;
}

double dense_bf16_peak_flops_per_second(int sm_count, int64_t sm_clock_khz) {
  return double(sm_count) * kHopperDenseBf16FlopsPerSmPerClock * double(sm_clock_khz) * 1e3;
}

double ridge_point_flops_per_byte(double peak_flops_per_second, double bytes_per_second) {
  if (!(peak_flops_per_second > 0) || !(bytes_per_second > 0))
    throw std::invalid_argument("ridge point: the peak and the bandwidth must both be positive");
  return peak_flops_per_second / bytes_per_second;
}

}  // namespace gemm
