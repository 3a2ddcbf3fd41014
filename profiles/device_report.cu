// make device: what the GPU reports about itself, what its memory delivers when measured, and the
// roofline figures that follow (docs/hardware.md, sections 1, 7 and 10).
//
//   device_report [--json] [--commit SHA]
//
// Every row says where its value comes from: "device query" (the CUDA runtime's device
// attributes, common/device_facts.hpp), "measured" (timed here) or "arithmetic" (from the rows
// above it). Two measurements, each on buffers of 2 GiB, over 30 times the L2 of an H100 or H200,
// so that the data streams from DRAM and not from L2:
//
//   copy   cudaMemcpyAsync of one buffer into another. Each copy reads 2 GiB and writes 2 GiB, and
//          counts 4 GiB moved: the same count as the roofline's bytes, which include D's writes.
//   read   a kernel that sums one buffer with 16-byte loads: reading alone, as a GEMM's A and B.
//
// Each is run a few times untimed first (the clocks rise, the code loads), then timed
// kRepetitions times between CUDA events; the report gives the median, which one slow run cannot
// move. The tensor peak is Hopper's 4096 flops per SM per clock at the maximum SM clock the device
// reports, the most it can do; NVIDIA's own peak uses a lower clock (docs/hardware.md, section 6).
#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/device_facts.hpp"
#include "common/harness/cli.hpp"
#include "common/harness/text_format.hpp"
#include "common/harness/timing.hpp"

namespace {

using gemm::format_number;

constexpr size_t kBufferBytes = size_t(2) << 30;
constexpr int kWarmups = 3;
constexpr int kRepetitions = 20;
constexpr int kReadThreads = 256;
// Loads each thread issues before it adds: several 16-byte loads in flight per thread, which DRAM's
// latency needs to reach its bandwidth.
constexpr int kLoadsInFlight = 4;

const char* const kUsage = "usage: device_report [--json] [--commit SHA]\n";

// Sums `count` 16-byte words into `total`. The sum is written only so that the loads are kept: what
// is measured is the time to read the buffer.
__global__ void __launch_bounds__(kReadThreads)
    sum_words(const uint4* __restrict__ words, size_t count, unsigned int* total) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t index = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned int sum = 0;
  for (; index + (kLoadsInFlight - 1) * stride < count; index += kLoadsInFlight * stride) {
    uint4 loaded[kLoadsInFlight];
#pragma unroll
    for (int load = 0; load < kLoadsInFlight; ++load) loaded[load] = words[index + load * stride];
#pragma unroll
    for (int load = 0; load < kLoadsInFlight; ++load)
      sum += loaded[load].x + loaded[load].y + loaded[load].z + loaded[load].w;
  }
  for (; index < count; index += stride)
    sum += words[index].x + words[index].y + words[index].z + words[index].w;
  sum = __reduce_add_sync(0xffffffffu, sum);
  if (threadIdx.x % 32 == 0) atomicAdd(total, sum);
}

// The median time, in milliseconds, of `operation` on the default stream, after kWarmups untimed
// runs. Nothing else runs on the GPU meanwhile, so the default stream is enough.
double median_ms(const std::function<void()>& operation) {
  for (int run = 0; run < kWarmups; ++run) operation();
  gemm::EventPairs events(kRepetitions);
  for (int run = 0; run < kRepetitions; ++run) {
    CUDA_CHECK(cudaEventRecord(events.start(run)));
    operation();
    CUDA_CHECK(cudaEventRecord(events.stop(run)));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> samples_ms;
  for (int run = 0; run < kRepetitions; ++run) samples_ms.push_back(events.elapsed_ms(run));
  return gemm::summarize_samples(samples_ms).median_ms;
}

struct Measurements {
  double copy_bytes_per_second = 0;
  double read_bytes_per_second = 0;
};

Measurements measure(const gemm::DeviceFacts& facts, int ordinal) {
  CUDA_CHECK(cudaSetDevice(ordinal));
  gemm::DeviceBuffer<uint4> source(kBufferBytes / sizeof(uint4)), destination(source.size());
  gemm::DeviceBuffer<unsigned int> total(1);
  Measurements measured;

  const double copy_ms = median_ms([&] {
    CUDA_CHECK(
        cudaMemcpyAsync(destination.get(), source.get(), source.bytes(), cudaMemcpyDeviceToDevice));
  });
  measured.copy_bytes_per_second = 2.0 * double(source.bytes()) / (copy_ms * 1e-3);

  // As many blocks as fit on the GPU at once: one wave, each thread looping over the buffer.
  int blocks_per_sm = 0;
  CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, sum_words, kReadThreads, 0));
  const int blocks = blocks_per_sm * facts.sm_count;
  const double read_ms = median_ms([&] {
    sum_words<<<blocks, kReadThreads>>>(source.get(), source.size(), total.get());
    CUDA_CHECK(cudaGetLastError());
  });
  measured.read_bytes_per_second = double(source.bytes()) / (read_ms * 1e-3);
  return measured;
}

// ---- output ---------------------------------------------------------------------------------

// 62914560 -> "62,914,560 B (60.0 MiB)": the exact count, and the size in the unit people say.
std::string bytes_text(int64_t bytes) {
  std::string digits = std::to_string(bytes), grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  const double kib = double(bytes) / 1024;
  const std::string unit = kib >= 1024.0 * 1024 ? format_number("%.1f GiB", kib / (1024.0 * 1024))
                           : kib >= 1024        ? format_number("%.1f MiB", kib / 1024)
                                                : format_number("%.1f KiB", kib);
  return grouped + " B (" + unit + ")";
}

std::string json_string(const std::string& text) {
  return "\"" + gemm::json_escape(text) + "\"";
}

struct Report {
  gemm::DeviceFacts facts;
  Measurements measured;
  std::string date, commit;

  double theoretical_bytes_per_second() const {
    return gemm::theoretical_dram_bytes_per_second(facts.memory_clock_khz,
                                                   facts.memory_bus_width_bits);
  }
  double peak_flops_per_second() const {
    return gemm::dense_bf16_peak_flops_per_second(facts.sm_count, facts.max_sm_clock_khz);
  }
};

void print_table(const Report& report) {
  const gemm::DeviceFacts& facts = report.facts;
  const double theoretical = report.theoretical_bytes_per_second();
  const double peak = report.peak_flops_per_second();
  const std::string buffer = format_number("%.0f GiB", double(kBufferBytes) / (1 << 30));
  const std::string timed = ", median of " + std::to_string(kRepetitions);
  const auto row = [](const std::string& what, const std::string& value, const char* source) {
    std::printf("| %s | %s | %s |\n", what.c_str(), value.c_str(), source);
  };
  std::printf("| what | value | source |\n|---|---|---|\n");
  row("GPU", facts.name, "device query");
  row("compute capability",
      std::to_string(facts.compute_capability_major) + "." +
          std::to_string(facts.compute_capability_minor),
      "device query");
  row("SMs", std::to_string(facts.sm_count), "device query");
  row("L2 cache", bytes_text(facts.l2_cache_bytes), "device query");
  row("global memory", bytes_text(facts.global_memory_bytes), "device query");
  row("memory bus width", std::to_string(facts.memory_bus_width_bits) + " bits", "device query");
  row("memory clock", format_number("%.0f MHz", facts.memory_clock_khz / 1e3), "device query");
  row("max SM clock", format_number("%.0f MHz", facts.max_sm_clock_khz / 1e3), "device query");
  row("shared memory per block, opt-in", bytes_text(facts.shared_memory_per_block_optin_bytes),
      "device query");
  row("shared memory per SM", bytes_text(facts.shared_memory_per_sm_bytes), "device query");
  row("thread block clusters", facts.cluster_launch ? "yes" : "no", "device query");
  row("theoretical DRAM bandwidth (2 x memory clock x bus width / 8)",
      format_number("%.3f TB/s", theoretical / 1e12), "arithmetic");
  row("copy bandwidth (device to device, " + buffer + " read + " + buffer + " written" + timed +
          ")",
      format_number("%.3f TB/s", report.measured.copy_bytes_per_second / 1e12), "measured");
  row("read bandwidth (a kernel summing " + buffer + timed + ")",
      format_number("%.3f TB/s", report.measured.read_bytes_per_second / 1e12), "measured");
  row("copy bandwidth / theoretical",
      format_number("%.1f%%", 100 * report.measured.copy_bytes_per_second / theoretical),
      "arithmetic");
  row("dense bf16 tensor peak at the max SM clock (SMs x 4096 x clock)",
      format_number("%.1f TFLOP/s", peak / 1e12), "arithmetic");
  row("ridge point: that peak / copy bandwidth",
      format_number("%.0f flops per byte",
                    gemm::ridge_point_flops_per_byte(peak, report.measured.copy_bytes_per_second)),
      "arithmetic");
  row("ridge point: that peak / theoretical bandwidth",
      format_number("%.0f flops per byte", gemm::ridge_point_flops_per_byte(peak, theoretical)),
      "arithmetic");
  std::printf("\nrun on %s, commit %s\n", report.date.c_str(), report.commit.c_str());
}

void print_json(const Report& report) {
  const gemm::DeviceFacts& facts = report.facts;
  const double theoretical = report.theoretical_bytes_per_second();
  const double peak = report.peak_flops_per_second();
  std::printf(
      "{\"gpu\": %s, \"compute_capability\": \"%d.%d\", \"sm_count\": %d, "
      "\"l2_cache_bytes\": %lld, \"global_memory_bytes\": %lld, \"memory_bus_width_bits\": %d, "
      "\"memory_clock_khz\": %lld, \"max_sm_clock_khz\": %lld, "
      "\"shared_memory_per_block_optin_bytes\": %lld, "
      "\"shared_memory_per_sm_bytes\": %lld, \"cluster_launch\": %s, "
      "\"theoretical_dram_bytes_per_second\": %.6e, \"copy_bytes_per_second\": %.6e, "
      "\"read_bytes_per_second\": %.6e, \"dense_bf16_peak_flops_per_second\": %.6e, "
      "\"ridge_flops_per_byte_copy\": %.2f, \"ridge_flops_per_byte_theoretical\": %.2f, "
      "\"buffer_bytes\": %lld, \"repetitions\": %d, \"date\": %s, \"commit\": %s}\n",
      json_string(facts.name).c_str(), facts.compute_capability_major,
      facts.compute_capability_minor, facts.sm_count, (long long)facts.l2_cache_bytes,
      (long long)facts.global_memory_bytes, facts.memory_bus_width_bits,
      (long long)facts.memory_clock_khz, (long long)facts.max_sm_clock_khz,
      (long long)facts.shared_memory_per_block_optin_bytes,
      (long long)facts.shared_memory_per_sm_bytes, facts.cluster_launch ? "true" : "false",
      theoretical, report.measured.copy_bytes_per_second, report.measured.read_bytes_per_second,
      peak, gemm::ridge_point_flops_per_byte(peak, report.measured.copy_bytes_per_second),
      gemm::ridge_point_flops_per_byte(peak, theoretical), (long long)kBufferBytes, kRepetitions,
      json_string(report.date).c_str(), json_string(report.commit).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  std::string commit = "unknown";
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help") {
      std::printf("%s", kUsage);
      return gemm::kExitPass;
    }
    if (flag == "--json") {
      json = true;
    } else if (flag == "--commit" && i + 1 < argc) {
      commit = argv[++i];
    } else {
      const std::string problem =
          flag == "--commit" ? "--commit needs a value" : "unknown option '" + flag + "'";
      std::fprintf(stderr, "device_report: error: %s (see --help)\n", problem.c_str());
      return gemm::kExitBadUsage;
    }
  }

  if (const auto missing = gemm::missing_gpu()) {
    std::fprintf(stderr, "device_report: error: %s\n", missing->c_str());
    return gemm::kExitNoGpu;
  }

  try {
    constexpr int kOrdinal = 0;  // the GPU every lesson runs on
    Report report;
    report.facts = gemm::query_device_facts(kOrdinal);
    // The tensor rate and the read kernel (built for sm_90a) are Hopper's.
    if (report.facts.compute_capability_major != 9 || report.facts.compute_capability_minor != 0) {
      std::fprintf(
          stderr,
          "device_report: error: %s is compute capability %d.%d; this report is for Hopper (9.0)\n",
          report.facts.name.c_str(), report.facts.compute_capability_major,
          report.facts.compute_capability_minor);
      return gemm::kExitUnsupportedGpu;
    }
    report.measured = measure(report.facts, kOrdinal);
    report.date = gemm::today_utc();
    report.commit = commit;
    if (json)
      print_json(report);
    else
      print_table(report);
    return gemm::kExitPass;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "device_report: error: %s\n", error.what());
    return gemm::kExitCudaError;
  }
}
