#pragma once
// A workload: what a kind of operands owns, so that the harness never asks which kind it runs.
// A lesson's description names its kind (lesson.json's "operands"; Lesson::workload), and the
// runner (common/harness/runner.hpp), the tests, the benchmark and the grader ask the kind's
// workload for
//   - its shape contract (past the course's, which every kind keeps);
//   - its inputs, made from the runner's bf16 A and B (drawn from the seed);
//   - what its lessons read besides A, B, C and the bias (GemmArgs);
//   - its check of D: the reference, on the device and, for small shapes, on the CPU;
//   - what its lessons are timed against, and the other pairings a report shows.
// Two kinds ship with the course: dense bf16 (lessons 01-17; dense_bf16.cu) and block-scaled e4m3
// (lesson 18; block_scaled_e4m3.hpp). A new kind is a class of its own and a WorkloadKind, in any
// file: nothing of the harness changes (tests/gpu/workload_test.cu adds one).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/gemm.hpp"
#include "common/harness/check_result.hpp"

namespace gemm {

// The current problem as the runner holds it: its buffers on the device.
struct ProblemBuffers {
  GemmProblem problem;
  uint64_t seed = 0;
  Epilogue epilogue;               // C and the bias (or none), alpha, beta and the activation
  bf16* a = nullptr;               // M x K and N x K, drawn from the seed by the runner
  bf16* b = nullptr;
  bf16* d = nullptr;               // M x N, then the guard zone
  int64_t guard_elements = 0;
};

class Workload {
 public:
  virtual ~Workload() = default;

  // The report's words for the inputs, e.g. "bf16 in, fp32 accumulate, bf16 out".
  virtual std::string describe_inputs() const = 0;
  // After the runner has drawn A, B, C and the bias: what this kind's lessons read (which may
  // change A and B in place). Every set_problem calls it on the kind it names.
  virtual void make_inputs(const ProblemBuffers& /*buffers*/, cudaStream_t /*stream*/) {}
  // Whether this kind's lessons read only A, B, C and the bias, and so run on inputs that another
  // kind made (lesson 16 on lesson 18's spread inputs, for their comparison).
  virtual bool reads_only_bf16_inputs() const { return true; }
  // What its lessons read besides those, into their arguments (from the last make_inputs).
  virtual void add_operands(GemmArgs& /*args*/) const {}

  // D against this kind's reference: on the device always, and against fp64 on the CPU when
  // `on_cpu` (small problems). The runner adds the hash and its own checks.
  virtual CheckResult verify(const ProblemBuffers& buffers, bool on_cpu, cudaStream_t stream) = 0;
  // What the check compares with, e.g. "cuBLAS fp32".
  virtual std::string check_reference_name(const ProblemBuffers& buffers) const = 0;

  // What a lesson of this kind is timed against: its name and one run of it into D.
  virtual std::string timing_reference_name(const ProblemBuffers& buffers) const = 0;
  virtual void run_timing_reference(const ProblemBuffers& buffers, cudaStream_t stream) = 0;

  // More operations a report pairs the lesson with, after the reference (lesson 18: cuBLASLt's
  // per-tensor fp8, the quantization of A and B).
  struct Comparison {
    std::string name;
    std::function<void(cudaStream_t)> run;
  };
  virtual std::vector<Comparison> comparisons(const ProblemBuffers& /*buffers*/) { return {}; }
};

// A kind of workload as a lesson names it: the name lesson.json uses, the two facts its contract
// and its arithmetic give the tools (`lessonNN --describe`: the grader draws K in multiples of
// k_multiple, and knows no run can beat the GPU's dense tensor rate for these operands), its shape
// contract (a plain function: the command line is checked before there is a GPU) and how to make
// one (the runner makes one of each kind it meets, and keeps it).
struct WorkloadKind {
  const char* name;
  int k_multiple;                   // the contract asks K % k_multiple == 0
  int dense_flop_per_clock_per_sm;  // a Hopper SM's tensor cores on these operands, at full rate
  std::optional<std::string> (*contract_violation)(const GemmProblem& problem);
  std::unique_ptr<Workload> (*make)();
};

}  // namespace gemm
