#pragma once
// How the course measures time: the paired protocol.
//
// The H100 at its 700 W limit is power-bound on large GEMMs: its SM clock moves within one run
// (1980 MHz cold, 1500 MHz once hot). A lesson timed in one block and cuBLAS in the next would be
// measured at different clocks, and their ratio would partly measure the clock. So a lesson and
// its reference are always timed together, alternately:
//
//   1. warm-up: both run, alternately, until at least `warmup` pairs and `warmup_seconds` of GPU
//      work are done, so the clock has settled where it will stay for the timed pairs;
//   2. pairs: for each pair, the L2 cache is flushed, one side runs between two events, the L2 is
//      flushed again, the other side runs between two events. The order alternates from pair to
//      pair (lesson first, then reference first), so that neither side always runs second;
//   3. each side's median, min and max; the ratio of the two is the median of the per-pair
//      ratios reference_ms / lesson_ms (above 1: the lesson is faster), which cancels whatever
//      the clock did between pairs.
//
// During the timed pairs a ClockMonitor records the SM clock, the power and the throttle reasons
// (common/harness/clock_monitor.hpp), and the result reports them.

#include <cstddef>
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/device_buffer.hpp"
#include "common/harness/clock_monitor.hpp"

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

// What the paired protocol measured.
struct PairedTiming {
  TimingStats lesson;     // the lesson's times
  TimingStats reference;  // the reference's times (cuBLAS, cuBLASLt, or another lesson)
  // Median over the pairs of reference_ms / lesson_ms, with the smallest and largest pair ratio.
  double ratio = 0, ratio_min = 0, ratio_max = 0;
  int pairs = 0;
  ClockReport clock;  // during the timed pairs

  bool timed() const { return pairs > 0; }
};

// The statistics of the protocol (pure, unit-tested): both sides' summaries and the median of the
// per-pair ratios. The two vectors hold pair i at index i; throws std::invalid_argument if they
// are empty or of different lengths.
PairedTiming summarize_pairs(const std::vector<double>& lesson_ms,
                             const std::vector<double>& reference_ms);

struct TimingOptions {
  int warmup = 5;                // at least this many untimed pairs first ...
  double warmup_seconds = 0.3;   // ... and at least this much GPU time: the clock settles
  int pairs = 30;                // timed pairs: at least this many ...
  double min_timed_seconds = 0.2;  // ... and more, up to max_pairs, until the lesson's runs add
  int max_pairs = 500;             //     up to this much GPU time (small shapes get more pairs)
  // If > 0, fewer pairs (but at least 3) when `pairs` of them would take longer than this: keeps
  // `make bench` within minutes for the slow early lessons. The report says how many were timed.
  double max_total_seconds = 0;
};

// How many timed pairs to run, given one pair's GPU time (lesson + reference) and the lesson's
// share of it (pure, unit-tested).
int planned_pairs(const TimingOptions& options, double pair_ms, double lesson_ms);

// Events for `count` timed runs, created once and destroyed with the object: run i is recorded
// between start(i) and stop(i). Throws CudaError if the events cannot be created.
class EventPairs {
 public:
  explicit EventPairs(int count);
  ~EventPairs();
  EventPairs(const EventPairs&) = delete;
  EventPairs& operator=(const EventPairs&) = delete;

  cudaEvent_t start(int i) const { return starts_[i]; }
  cudaEvent_t stop(int i) const { return stops_[i]; }
  // Run i's time; both of its events must have completed.
  double elapsed_ms(int i) const;

 private:
  std::vector<cudaEvent_t> starts_, stops_;
};

// Times two GPU operations with the paired protocol. Each operation enqueues its work on the
// stream it receives. `before_lesson` and `before_reference`, if given, run before each run of
// their side, outside its events (for example zeroing a workspace the lesson needs zeroed).
class PairedTimer {
 public:
  // l2_cache_bytes: the L2 size; the flush writes twice that much. cuda_device: for the monitor.
  PairedTimer(size_t l2_cache_bytes, int cuda_device);

  using Operation = std::function<void(cudaStream_t)>;
  PairedTiming time(const Operation& lesson, const Operation& reference,
                    const TimingOptions& options, cudaStream_t stream,
                    const Operation& before_lesson = nullptr,
                    const Operation& before_reference = nullptr);

  // Overwrites the whole L2 so that the next operation's inputs start in HBM, as they would in a
  // real program where other kernels ran in between. Every timed run starts with it.
  void flush_l2(cudaStream_t stream, int salt);

 private:
  DeviceBuffer<unsigned char> flush_buffer_;
  ClockMonitor monitor_;
};

// Waits for the stream like cudaStreamSynchronize, but not forever. A CUDA error becomes a
// CudaError. If the GPU has not finished after `timeout_seconds`, the kernel is taken for
// deadlocked (a barrier nobody arrives at): this prints one line and ends the process at once with
// exit code 5 (kExitCudaError). A running kernel cannot be cancelled, and every later CUDA call,
// even freeing memory in a destructor, would wait for it forever; ending the process is the only
// way out, and the driver then tears the kernel down.
void synchronize_or_timeout(cudaStream_t stream, double timeout_seconds);

}  // namespace gemm
