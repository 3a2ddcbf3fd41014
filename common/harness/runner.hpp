#pragma once
// The harness of a lesson's run, declared here and defined by concern:
//   lesson_checks.cu  what a lesson can run: on this GPU, with this epilogue and configuration
//   runner.cu         the LessonRunner: inputs, workspace, launches, checks and paired timings
//   run_report.cu     the report: the human table, the CSV row of `make bench`, the JSON
//   run_lesson.cu     run_lesson(): the whole life of a lesson executable

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/device_buffer.hpp"
#include "common/gemm.hpp"
#include "common/harness/check_result.hpp"
#include "common/harness/cli.hpp"
#include "common/harness/timing.hpp"
#include "common/harness/verify.hpp"
#include "common/lesson.hpp"
#include "common/references/reference.hpp"
#include "common/workloads/workload.hpp"

namespace gemm {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;
  int sm_count = 0;
  size_t l2_bytes = 0;
};

// What the runner knows of CUDA device `ordinal` (made the current device). Throws CudaError.
DeviceInfo query_device(int ordinal);

// Why this GPU cannot run the lesson, as one line, or nothing if it can.
std::optional<std::string> unsupported_reason(const Lesson& lesson, const DeviceInfo& device);

// Why the lesson cannot compute this epilogue, as one line, or nothing if it can: only lessons
// with a fused epilogue (lesson 15) take anything but the plain product.
std::optional<std::string> epilogue_refusal(const Lesson& lesson, const EpilogueOptions& epilogue);
// Why `--config name` cannot run on this lesson (it has one configuration, or none of that name,
// and then the message lists them), or nullopt (also for an empty name: no --config).
std::optional<std::string> configuration_refusal(const Lesson& lesson, const std::string& name);

// The epilogue as a formula, e.g. "D = gelu(1.5 * A*B^T + 0.5 * C + bias)".
std::string describe_epilogue(const EpilogueOptions& epilogue);

// The fp64 CPU reference is also used when M * N * K is at most this (about a tenth of a second).
inline constexpr double kCpuReferenceMaxMacs = double(1 << 27);

// What check() does besides comparing D, from what the lesson declares. A check must fail
// whatever a wrong kernel gets right by chance, and two chances need launches of their own:
//   - other_inputs_first: one launch on other random inputs, into the same workspace, before the
//     checked one. A lesson whose workspace resets itself (Stream-K's flags, lesson 14 on) is
//     zeroed once, when its workspace is allocated: a launch that forgets the reset leaves the
//     next launch stale flags and partial sums, and on the same inputs those stale sums are right.
//     A lesson that waits for its prerequisite (lesson 17) needs a first launch anyway, so that its
//     one-time host work (loading the kernel, occupancy queries) does not delay the checked one.
//   - late_inputs: the checked launch gets its inputs late, from a kernel ahead of it that also
//     watches D and the workspace (common/harness/late_inputs.hpp), for a lesson that waits for its
//     prerequisite on the device.
// The launch on other inputs catches a missing reset only where the race it leaves goes wrong (the
// last part adding stale sums before the other parts wrote theirs), so a lesson that declares its
// flags also has them read after the checked launch:
//   - flags_checked: every byte of LaunchPlan::workspace_flag_bytes must be zero again.
struct CheckPlan {
  bool other_inputs_first = false;
  bool late_inputs = false;
  bool flags_checked = false;
};
CheckPlan check_plan(const Lesson& lesson);

// Everything one run of a lesson executable measured.
struct RunReport {
  const Lesson* lesson = nullptr;
  DeviceInfo device;
  GemmProblem problem;
  uint64_t seed = 0;
  EpilogueOptions epilogue;
  std::string inputs = "bf16 in, fp32 accumulate, bf16 out";  // the lesson's workload's words
  std::optional<CheckResult> check;
  std::string check_reference = "cuBLAS fp32";  // what the check compared D with
  std::string reference_name = "cuBLAS";
  std::string configuration;  // the configuration that ran (lesson 16), or empty
  PairedTiming timing;  // timing.timed() is false when the check failed
  // More pairings of the lesson, reported after the main one (lesson 18: cuBLASLt's per-tensor
  // fp8, and the quantization of A and B): what the lesson was paired with, and the timing.
  struct Comparison {
    std::string name;
    PairedTiming timing;
  };
  std::vector<Comparison> comparisons;

  double lesson_tflops() const { return problem.flops() / (timing.lesson.median_ms * 1e9); }
  double reference_tflops() const { return problem.flops() / (timing.reference.median_ms * 1e9); }
};

// Owns everything one process needs to check and time lessons on one GPU: a stream, cuBLAS,
// the paired timer and the device buffers of the current problem. The lesson executables,
// the GPU tests, the benchmark and the grader all go through this class, so they measure the
// same way.
class LessonRunner {
 public:
  // Selects the GPU; throws CudaError if there is none.
  explicit LessonRunner(int device_ordinal = 0);
  ~LessonRunner();
  LessonRunner(const LessonRunner&) = delete;
  LessonRunner& operator=(const LessonRunner&) = delete;

  const DeviceInfo& device() const { return device_; }

  // Allocates A, B and D for the problem and fills A and B with fresh random values. An
  // epilogue that reads C (beta != 0) or a bias gets those too, also random. Then the workload of
  // `kind` makes its inputs from them (common/workloads/workload.hpp; lesson 18's spreads A's and
  // B's blocks over many orders of magnitude and quantizes them). Lessons of that kind run on them,
  // and so do lessons whose kind reads only bf16 inputs (the same, spread, A and B).
  void set_problem(const GemmProblem& problem, uint64_t seed,
                   const EpilogueOptions& epilogue = EpilogueOptions{},
                   const WorkloadKind& kind = workloads::kind_bf16);
  const GemmProblem& problem() const { return problem_; }

  // One launch of the lesson into D (workspace allocated, and zeroed where the lesson needs it).
  // Does not wait.
  void launch(const Lesson& lesson);
  // Poisons D and the guard zone after it, launches the lesson once, waits (with a deadlock
  // timeout) and compares D with its workload's reference (cuBLAS, cuBLASLt for an epilogue) and,
  // for small shapes, with fp64 on the CPU. Before that, the launches of check_plan(lesson): one on other inputs for a
  // lesson whose workspace resets itself, and late inputs for one that waits for its prerequisite
  // on the device (lesson 17; common/harness/late_inputs.hpp).
  CheckResult check(const Lesson& lesson);
  // The paired protocol (common/harness/timing.hpp): the lesson against its workload's reference
  // (cuBLAS with bf16 output, cuBLASLt's fused epilogue, cuBLASLt's fp8).
  PairedTiming time_against_reference(const Lesson& lesson, const TimingOptions& options);
  // The paired protocol against any operation on the runner's stream (the lesson's workspace
  // prepared before each of its runs).
  PairedTiming time_against(const Lesson& lesson, const PairedTimer::Operation& other,
                            const TimingOptions& options);
  // The lesson against each of its workload's further comparisons (lesson 18: cuBLASLt's
  // per-tensor fp8, the quantization of A and B), named.
  std::vector<RunReport::Comparison> time_comparisons(const Lesson& lesson,
                                                      const TimingOptions& options);
  // The paired protocol with another lesson as the reference (the grader: a submission against
  // the course's solution).
  PairedTiming time_against_lesson(const Lesson& lesson, const Lesson& baseline,
                                   const TimingOptions& options);
  // What time_against_reference compares the lesson with: "cuBLAS", "cuBLASLt GELU_BIAS
  // epilogue", ...
  std::string reference_name(const Lesson& lesson);
  // A report of the lesson on the current problem with nothing measured yet: the lesson, the GPU,
  // the problem, and its workload's words for the inputs and for what the check compares with.
  RunReport report_for(const Lesson& lesson);
  // The workload of a kind (made at its first use, then kept), and the current problem's buffers
  // as a workload sees them: for a kind's own tools and tests (lesson 18's sweep).
  Workload& workload(const WorkloadKind& kind);
  ProblemBuffers buffers() const;
  // The lesson on the current problem, checked and, if the check passed, timed against the
  // reference (make bench and make sweep).
  RunReport check_and_time(const Lesson& lesson, const TimingOptions& options);

  // Direct access for tests that corrupt or inspect the output.
  cudaStream_t stream() const { return stream_; }
  bf16* d() const { return d_.get(); }
  const bf16* a() const { return a_.get(); }
  const bf16* b() const { return b_.get(); }
  int64_t d_elements() const { return problem_.m * problem_.n; }
  int64_t guard_elements() const { return int64_t(d_.size()) - d_elements(); }
  // Compares the current contents of D (no launch) the way check() does, for a lesson of this
  // kind of workload (lesson 18's: the product of the values its operands stand for, with the
  // allowance for the tensor cores' fp8 sums).
  CheckResult verify_current_output(const WorkloadKind& kind = workloads::kind_bf16);
  // sqrt(sum (d - ref)^2 / sum ref^2) of the current D against the fp32 product of the bf16 A and
  // B: what a lesson's output loses against the exact product of its bf16 inputs.
  double relative_rms_error_against_bf16_product();
  // Copies D to the host.
  std::vector<bf16> download_d() const;
  // Fills the lesson's workspace with `byte` (tests: a launch must not depend on what a previous
  // one left there; a lesson whose workspace must start zeroed gets it zeroed again first).
  void fill_workspace(const Lesson& lesson, unsigned char byte);

  // The name of the configuration that the last check or timing of `lesson` ran (its plan for the
  // current problem); empty for a lesson with one.
  std::string configuration_that_ran(const Lesson& lesson) const {
    return configuration_name(lesson, workspace_.plan);
  }

  // How long a single launch may take before we call it a deadlock.
  double launch_timeout_seconds() const;

 private:
  // A lesson's workspace, whether it holds zeros now (what a lesson whose workspace resets itself
  // leaves after every launch), and the plan it was sized for.
  struct Workspace {
    DeviceBuffer<unsigned char> memory;
    bool zeroed = false;
    LaunchPlan plan;  // what the lesson that uses it runs for the current problem (args())
  };
  GemmArgs args(const Lesson& lesson, Workspace& workspace);
  // Whether the problem is small enough for the fp64 reference on the CPU (kCpuReferenceMaxMacs).
  bool cpu_reference_fits() const;
  // check()'s first launch (CheckPlan::other_inputs_first): the lesson on other random A and B,
  // into D and the lesson's workspace as they are. Waits for it.
  void launch_on_other_inputs(const Lesson& lesson);
  // check()'s launch of a lesson that waits for its prerequisite: poisoned inputs, restored late
  // by the kernel ahead of it, which also counts what the lesson wrote too early. Waits for both.
  EarlyWrites launch_with_late_inputs(const Lesson& lesson);
  // After check()'s launch (CheckPlan::flags_checked): how many bytes of the lesson's workspace
  // flags are not zero.
  int64_t flag_bytes_left_set();
  Epilogue epilogue() const;
  // Before a launch of `lesson` (outside any timed region): zeroes the workspace where the lesson
  // needs zeros and will not find them.
  void prepare_workspace(const Lesson& lesson, Workspace& workspace, cudaStream_t stream);

  DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  CublasGemm cublas_;
  std::map<const WorkloadKind*, std::unique_ptr<Workload>> workloads_;  // one of each kind met
  const WorkloadKind* inputs_kind_ = &workloads::kind_bf16;  // the kind that made the inputs
  PairedTimer timer_;
  GemmProblem problem_{0, 0, 0};
  uint64_t seed_ = 0;
  EpilogueOptions epilogue_options_;
  DeviceBuffer<bf16> a_, b_, d_, c_, bias_;
  DeviceBuffer<float> reference_;
  Workspace workspace_, baseline_workspace_;
};


std::string format_table(const RunReport& report);
std::string csv_header();
std::string format_csv_row(const RunReport& report);
std::string format_json(const RunReport& report);
// `lessonNN --describe`: what the lesson is, as one line of JSON, for the tools (the grader draws
// its shapes and its physical limit from it): its number, slug, kind of operands with that kind's
// K multiple and dense tensor FLOP per clock per SM, whether it computes the fused epilogue, and
// its configurations.
std::string describe_lesson(const Lesson& lesson);

// The whole life of a lesson executable: parse the command line, validate the shape, find the
// GPU, check, time against cuBLAS, report. Returns the process exit code (ExitCode). Never throws.
int run_lesson(const Lesson& lesson, int argc, char** argv);

// The same, but timed against another lesson instead of cuBLAS (the grader's submission against
// the course's solution; the report's "reference" names the baseline).
int run_lesson_against(const Lesson& lesson, const Lesson& baseline, int argc, char** argv);

}  // namespace gemm
