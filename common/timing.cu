#include "common/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/cli.hpp"

namespace gemm {

GpuTimer::GpuTimer(size_t l2_cache_bytes) : flush_buffer_(2 * l2_cache_bytes) {}

TimingStats GpuTimer::time(const std::function<void(cudaStream_t)>& operation,
                           const TimingOptions& options, cudaStream_t stream) {
  cudaEvent_t warm_start, warm_stop;
  CUDA_CHECK(cudaEventCreate(&warm_start));
  CUDA_CHECK(cudaEventCreate(&warm_stop));
  for (int i = 0; i < options.warmup; ++i) {
    CUDA_CHECK(cudaEventRecord(warm_start, stream));
    operation(stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(warm_stop, stream));
  }
  synchronize_or_timeout(stream, 600.0);

  int repetitions = options.iters;
  if (options.warmup > 0 && options.max_total_seconds > 0) {
    float last_warmup_ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&last_warmup_ms, warm_start, warm_stop));
    const double affordable = options.max_total_seconds * 1e3 / std::max(1e-3, double(last_warmup_ms));
    repetitions = std::clamp(int(affordable), std::min(3, options.iters), options.iters);
  }
  CUDA_CHECK(cudaEventDestroy(warm_start));
  CUDA_CHECK(cudaEventDestroy(warm_stop));

  std::vector<cudaEvent_t> starts(repetitions), stops(repetitions);
  for (int i = 0; i < repetitions; ++i) {
    CUDA_CHECK(cudaEventCreate(&starts[i]));
    CUDA_CHECK(cudaEventCreate(&stops[i]));
  }
  for (int i = 0; i < repetitions; ++i) {
    // Overwrite the whole L2 with the flush buffer so the operation's inputs start in HBM.
    CUDA_CHECK(cudaMemsetAsync(flush_buffer_.get(), i & 0xff, flush_buffer_.bytes(), stream));
    CUDA_CHECK(cudaEventRecord(starts[i], stream));
    operation(stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(stops[i], stream));
  }
  synchronize_or_timeout(stream, 600.0);

  std::vector<double> samples_ms(repetitions);
  for (int i = 0; i < repetitions; ++i) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, starts[i], stops[i]));
    samples_ms[i] = ms;
    CUDA_CHECK(cudaEventDestroy(starts[i]));
    CUDA_CHECK(cudaEventDestroy(stops[i]));
  }
  return summarize_samples(samples_ms);
}

void synchronize_or_timeout(cudaStream_t stream, double timeout_seconds) {
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    const cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) CUDA_CHECK(status);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeout_seconds) {
      std::fprintf(stderr,
                   "error: the GPU did not finish within %d s: the kernel is probably deadlocked "
                   "(a barrier nobody arrives at?)\n",
                   int(timeout_seconds));
      std::fflush(stderr);
      std::_Exit(kExitCudaError);  // no destructors: they would wait for the hung kernel
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace gemm
