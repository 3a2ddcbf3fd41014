#include "common/harness/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/harness/cli.hpp"

namespace gemm {

EventPairs::EventPairs(int count) : starts_(count), stops_(count) {
  for (int i = 0; i < count; ++i) {
    CUDA_CHECK(cudaEventCreate(&starts_[i]));
    CUDA_CHECK(cudaEventCreate(&stops_[i]));
  }
}

EventPairs::~EventPairs() {
  for (size_t i = 0; i < starts_.size(); ++i) {
    cudaEventDestroy(starts_[i]);
    cudaEventDestroy(stops_[i]);
  }
}

double EventPairs::elapsed_ms(int i) const {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, starts_[i], stops_[i]));
  return ms;
}

PairedTimer::PairedTimer(size_t l2_cache_bytes, int cuda_device)
    : flush_buffer_(2 * l2_cache_bytes), monitor_(cuda_device) {}

void PairedTimer::flush_l2(cudaStream_t stream, int salt) {
  CUDA_CHECK(cudaMemsetAsync(flush_buffer_.get(), salt & 0xff, flush_buffer_.bytes(), stream));
}

PairedTiming PairedTimer::time(const Operation& lesson, const Operation& reference,
                               const TimingOptions& options, cudaStream_t stream,
                               const Operation& before_lesson,
                               const Operation& before_reference) {
  // One run of a side: its preparation, the L2 flush, start event, the operation, stop event.
  const auto run = [&](bool is_lesson, const EventPairs& events, int slot, int salt) {
    const Operation& prepare = is_lesson ? before_lesson : before_reference;
    if (prepare) prepare(stream);
    flush_l2(stream, salt);
    CUDA_CHECK(cudaEventRecord(events.start(slot), stream));
    (is_lesson ? lesson : reference)(stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(events.stop(slot), stream));
  };

  // Warm-up, step 1: one pair, then one more, timed, to learn how long a pair takes. (The very
  // first runs also pay for loading code and for cuBLAS's choice of kernel: not representative.)
  EventPairs first_pairs(2);
  for (int i = 0; i < 2; ++i) {
    run(true, first_pairs, 0, 2 * i);
    run(false, first_pairs, 1, 2 * i + 1);
  }
  synchronize_or_timeout(stream, 600.0);
  const double lesson_ms = first_pairs.elapsed_ms(0);
  const double pair_ms = lesson_ms + first_pairs.elapsed_ms(1);

  // Warm-up, step 2: enough further pairs for `warmup` pairs and `warmup_seconds` of GPU work.
  const int warmup_pairs = std::max(
      options.warmup - 2,
      int(std::min(10000.0, std::ceil(options.warmup_seconds * 1e3 / std::max(pair_ms, 1e-3))) - 2));
  if (warmup_pairs > 0) {
    EventPairs unused(1);  // warm-up runs are not timed; they record into one reused slot
    for (int i = 0; i < warmup_pairs; ++i) {
      run(true, unused, 0, i);
      run(false, unused, 0, i);
    }
  }
  synchronize_or_timeout(stream, 600.0);

  // The timed pairs, enqueued all at once while the monitor samples the clock.
  const int pairs = planned_pairs(options, pair_ms, lesson_ms);
  EventPairs lesson_events(pairs), reference_events(pairs);
  monitor_.start();
  for (int i = 0; i < pairs; ++i) {
    // Alternate which side runs first, so that neither always follows the other.
    const bool lesson_first = i % 2 == 0;
    run(lesson_first, lesson_first ? lesson_events : reference_events, i, 2 * i);
    run(!lesson_first, lesson_first ? reference_events : lesson_events, i, 2 * i + 1);
  }
  synchronize_or_timeout(stream, 600.0);
  const ClockReport clock = monitor_.stop();

  std::vector<double> lesson_samples(pairs), reference_samples(pairs);
  for (int i = 0; i < pairs; ++i) {
    lesson_samples[i] = lesson_events.elapsed_ms(i);
    reference_samples[i] = reference_events.elapsed_ms(i);
  }
  PairedTiming timing = summarize_pairs(lesson_samples, reference_samples);
  timing.clock = clock;
  return timing;
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
