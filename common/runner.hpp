#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/cli.hpp"
#include "common/device_buffer.hpp"
#include "common/gemm.hpp"
#include "common/lesson.hpp"
#include "common/reference.hpp"
#include "common/timing.hpp"
#include "common/verify.hpp"

namespace gemm {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;
  int sm_count = 0;
  size_t l2_bytes = 0;
};

// Why this GPU cannot run the lesson, as one line, or nothing if it can.
std::optional<std::string> unsupported_reason(const Lesson& lesson, const DeviceInfo& device);

// The fp64 CPU reference is also used when M * N * K is at most this (about a tenth of a second).
inline constexpr double kCpuReferenceMaxMacs = double(1 << 27);

struct CheckResult {
  VerifyReport against_cublas;                 // cuBLAS, fp32 output
  std::optional<VerifyReport> against_cpu;     // fp64 on the CPU, small shapes only
  bool passed() const { return against_cublas.passed() && (!against_cpu || against_cpu->passed()); }
};

// Owns everything one process needs to check and time lessons on one GPU: a stream, cuBLAS,
// the L2-flushing timer and the device buffers of the current problem. The lesson executables,
// the GPU tests and the benchmark all go through this class, so they measure the same way.
class LessonRunner {
 public:
  // Selects the GPU; throws CudaError if there is none.
  explicit LessonRunner(int device_ordinal = 0);
  ~LessonRunner();
  LessonRunner(const LessonRunner&) = delete;
  LessonRunner& operator=(const LessonRunner&) = delete;

  const DeviceInfo& device() const { return device_; }

  // Allocates A, B and D for the problem and fills A and B with fresh random values.
  void set_problem(const GemmProblem& problem, uint64_t seed);
  const GemmProblem& problem() const { return problem_; }

  // One launch of the lesson into D (workspace allocated as the lesson asks). Does not wait.
  void launch(const Lesson& lesson);
  // Poisons D and the guard zone after it, launches the lesson once, waits (with a deadlock
  // timeout) and compares D with cuBLAS and, for small shapes, with fp64 on the CPU.
  CheckResult check(const Lesson& lesson);
  TimingStats time_lesson(const Lesson& lesson, const TimingOptions& options);
  TimingStats time_cublas(const TimingOptions& options);

  // Direct access for tests that corrupt or inspect the output.
  cudaStream_t stream() const { return stream_; }
  bf16* d() const { return d_.get(); }
  const bf16* a() const { return a_.get(); }
  const bf16* b() const { return b_.get(); }
  int64_t d_elements() const { return problem_.m * problem_.n; }
  int64_t guard_elements() const { return int64_t(d_.size()) - d_elements(); }
  // Compares the current contents of D (no launch) the way check() does.
  CheckResult verify_current_output();
  // Copies D to the host.
  std::vector<bf16> download_d() const;

  // How long a single launch may take before we call it a deadlock.
  double launch_timeout_seconds() const;

 private:
  GemmArgs args(const Lesson& lesson);

  DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  CublasGemm cublas_;
  GpuTimer timer_;
  GemmProblem problem_{0, 0, 0};
  DeviceBuffer<bf16> a_, b_, d_;
  DeviceBuffer<float> reference_;
  DeviceBuffer<unsigned char> workspace_;
};

// Everything one run of a lesson executable measured.
struct RunReport {
  const Lesson* lesson = nullptr;
  DeviceInfo device;
  GemmProblem problem;
  uint64_t seed = 0;
  std::optional<CheckResult> check;
  TimingStats lesson_time, cublas_time;

  double lesson_tflops() const { return problem.flops() / (lesson_time.median_ms * 1e9); }
  double cublas_tflops() const { return problem.flops() / (cublas_time.median_ms * 1e9); }
  double ratio_to_cublas() const { return cublas_time.median_ms / lesson_time.median_ms; }
};

std::string format_table(const RunReport& report);
std::string csv_header();
std::string format_csv_row(const RunReport& report);
std::string format_json(const RunReport& report);

// The whole life of a lesson executable: parse the command line, validate the shape, find the
// GPU, check, time, report. Returns the process exit code (ExitCode). Never throws.
int run_lesson(const Lesson& lesson, int argc, char** argv);

}  // namespace gemm
