#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/device_buffer.hpp"

namespace gemm {

struct TimingStats {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  int samples = 0;
};

// Median, min and max of the samples (the median of an even count is the mean of the middle two).
// Throws std::invalid_argument if there are none.
TimingStats summarize_samples(std::vector<double> samples_ms);

struct TimingOptions {
  int warmup = 5;   // untimed runs first: module load, clocks ramping up, cuBLAS heuristics
  int iters = 20;   // timed repetitions
  // If > 0, fewer repetitions (but at least 3) are timed when `iters` of them would take longer
  // than this, judged from the last warm-up. Keeps `make bench` short for the slow early lessons.
  double max_total_seconds = 0;
};

// Times a GPU operation the way every lesson and cuBLAS are timed in this course:
//   warm-up runs; then for each repetition: flush the L2 cache (write a buffer twice its size),
//   record an event, run the operation, record an event. The time of a repetition is the time
//   between its two events, so the flush is never counted and each run starts with a cold L2,
//   as it would in a real network where other kernels ran in between.
class GpuTimer {
 public:
  explicit GpuTimer(size_t l2_cache_bytes);
  TimingStats time(const std::function<void(cudaStream_t)>& operation, const TimingOptions& options,
                   cudaStream_t stream);

 private:
  DeviceBuffer<unsigned char> flush_buffer_;
};

// Waits for the stream like cudaStreamSynchronize, but not forever. A CUDA error becomes a
// CudaError. If the GPU has not finished after `timeout_seconds`, the kernel is taken for
// deadlocked (a barrier nobody arrives at): this prints one line and ends the process at once with
// exit code 5 (kExitCudaError). A running kernel cannot be cancelled, and every later CUDA call,
// even freeing memory in a destructor, would wait for it forever; ending the process is the only
// way out, and the driver then tears the kernel down.
void synchronize_or_timeout(cudaStream_t stream, double timeout_seconds);

}  // namespace gemm
