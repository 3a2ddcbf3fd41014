#pragma once
// What the GPU reports about itself, and the roofline arithmetic built on it.
//
// The course ran first on an H100 SXM and now runs on an H200 SXM: the same Hopper SMs, different
// memory. Which one a program runs on changes the memory bandwidth and so the ridge point, so the
// figures that depend on the GPU are read from the device (make device, and lesson 16's cost model
// at run time) rather than written into the code. docs/hardware.md puts both GPUs side by side.
//
// The arithmetic is pure and unit-tested on the host; only query_device_facts needs a GPU.

#include <cstdint>
#include <string>

namespace gemm {

// The device attributes the course uses, as cudaDeviceGetAttribute and cudaGetDeviceProperties
// report them. Clocks are the peak clocks the device reports, not the clock under load: an H100 at
// its power limit runs its SMs well below the maximum (common/harness/clock_monitor.hpp).
struct DeviceFacts {
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int sm_count = 0;
  int64_t l2_cache_bytes = 0;
  int64_t global_memory_bytes = 0;
  int memory_bus_width_bits = 0;
  int64_t memory_clock_khz = 0;  // cudaDevAttrMemoryClockRate
  int64_t max_sm_clock_khz = 0;  // cudaDevAttrClockRate
  int64_t shared_memory_per_block_optin_bytes = 0;
  int64_t shared_memory_per_sm_bytes = 0;
  bool cluster_launch = false;  // thread block clusters (section 5 of docs/hardware.md)
};

// The facts of CUDA device `ordinal`. Throws CudaError (common/cuda_check.hpp) if a query fails.
// CUDA 13 removed cudaDeviceProp's clock fields: both clocks come from device attributes.
DeviceFacts query_device_facts(int ordinal);

// Dense bf16 work of one Hopper SM per clock: 512 multiply-adds on each of its four tensor cores
// (docs/hardware.md, section 6). Not the rate of other architectures.
inline constexpr int kHopperDenseBf16FlopsPerSmPerClock = 4096;

// The DRAM bandwidth that the reported memory clock and bus width imply, in bytes per second:
// 2 transfers per clock (double data rate) x clock x bus width / 8.
double theoretical_dram_bytes_per_second(int64_t memory_clock_khz, int memory_bus_width_bits);

// Hopper's dense bf16 tensor-core peak at an SM clock, in flop/s: SMs x 4096 x clock.
double dense_bf16_peak_flops_per_second(int sm_count, int64_t sm_clock_khz);

// The arithmetic intensity, in flops per byte, above which a kernel is limited by the tensor cores
// rather than by memory: peak / bandwidth. Throws std::invalid_argument unless both are positive.
double ridge_point_flops_per_byte(double peak_flops_per_second, double bytes_per_second);

}  // namespace gemm
