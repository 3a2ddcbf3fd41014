// The LessonRunner (common/harness/runner.hpp): a lesson's inputs, workspace, launches, checks and paired
// timings on one GPU, which the executables, the tests, the benchmark and the grader share.
#include "common/harness/runner.hpp"

#include <algorithm>
#include <cmath>

#include "common/cuda_check.hpp"
#include "common/harness/late_inputs.hpp"
#include "common/harness/random.hpp"
#include "common/references/epilogue_reference.hpp"

namespace gemm {

namespace {

// FNV-1a over D's bytes: two runs on the same inputs must give the same hash, bit for bit.
uint64_t fnv1a(const void* data, size_t bytes) {
  const unsigned char* byte = static_cast<const unsigned char*>(data);
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ byte[i]) * 1099511628211ull;
  return hash;
}

// (The stream's work first: `data` may still be being written.)
std::vector<float> download_floats(const float* data, size_t count, cudaStream_t stream) {
  std::vector<float> values(count);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaMemcpy(values.data(), data, count * sizeof(float), cudaMemcpyDeviceToHost));
  return values;
}

std::vector<float> download_as_float(const bf16* data, size_t count) {
  std::vector<bf16> values(count);
  CUDA_CHECK(cudaMemcpy(values.data(), data, count * sizeof(bf16), cudaMemcpyDeviceToHost));
  return std::vector<float>(values.begin(), values.end());
}
}  // namespace

LessonRunner::LessonRunner(int device_ordinal)
    : device_(query_device(device_ordinal)), timer_(device_.l2_bytes, device_ordinal) {
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

LessonRunner::~LessonRunner() {
  if (stream_) cudaStreamDestroy(stream_);
}

void LessonRunner::set_problem(const GemmProblem& problem, uint64_t seed,
                               const EpilogueOptions& epilogue, Operands operands) {
  problem_ = problem;
  seed_ = seed;
  epilogue_options_ = epilogue;
  operands_ = operands;
  a_.resize(size_t(problem.m * problem.k));
  b_.resize(size_t(problem.n * problem.k));
  // The guard zone: up to 256 rows past the end of D, where a kernel that forgets to predicate
  // the last row tile of a ragged M would write.
  const int64_t guard = std::max<int64_t>(1024, std::min<int64_t>(256 * problem.n, int64_t(1) << 24));
  d_.resize(size_t(problem.m * problem.n + guard));
  // Different seeds for A, B, C and the bias, all derived from the one the user gave.
  fill_uniform(a_.get(), a_.size(), 4 * seed, stream_);
  fill_uniform(b_.get(), b_.size(), 4 * seed + 1, stream_);
  c_.resize(epilogue.beta != 0.0f ? size_t(problem.m * problem.n) : 0);
  if (c_.size() > 0) fill_uniform(c_.get(), c_.size(), 4 * seed + 2, stream_);
  bias_.resize(epilogue.bias ? size_t(problem.n) : 0);
  if (bias_.size() > 0) fill_uniform(bias_.get(), bias_.size(), 4 * seed + 3, stream_);
  // cuBLASLt (and its workspace) only for the epilogue's check and timing.
  if (!this->epilogue().is_plain() && !epilogue_reference_)
    epilogue_reference_ = std::make_unique<EpilogueReference>();
  // Lesson 18: blocks of A (1 x 128) and B (128 x 128) far apart in magnitude, then quantized.
  if (operands == Operands::e4m3_block_scaled) {
    spread_block_magnitudes(a_.get(), problem.m, problem.k, 1, 4 * seed, stream_);
    spread_block_magnitudes(b_.get(), problem.n, problem.k, BlockScaledOperands::kBlock,
                            4 * seed + 1, stream_);
    if (!fp8_inputs_) fp8_inputs_ = std::make_unique<BlockScaledInputs>();
    if (!fp8_reference_) fp8_reference_ = std::make_unique<Fp8Reference>();
    fp8_inputs_->quantize(problem, a_.get(), b_.get(), stream_);
  }
}

Epilogue LessonRunner::epilogue() const {
  Epilogue epilogue;
  epilogue.alpha = epilogue_options_.alpha;
  epilogue.beta = epilogue_options_.beta;
  epilogue.c = c_.size() > 0 ? c_.get() : nullptr;
  epilogue.bias = bias_.size() > 0 ? bias_.get() : nullptr;
  epilogue.activation = epilogue_options_.activation;
  return epilogue;
}

GemmArgs LessonRunner::args(const Lesson& lesson, Workspace& workspace) {
  GemmArgs args;
  args.problem = problem_;
  args.a = a_.get();
  args.b = b_.get();
  args.d = d_.get();
  args.epilogue = epilogue();
  if (lesson.operands == Operands::e4m3_block_scaled) {
    if (operands_ != Operands::e4m3_block_scaled)
      throw std::logic_error(lesson_name(lesson) + " reads e4m3 operands: set_problem must make "
                             "them (Operands::e4m3_block_scaled)");
    args.fp8 = fp8_inputs_->operands();
  }
  // What the lesson runs for the problem, decided once for this operation: the launches, the
  // workspace and the flag check all take this plan.
  workspace.plan = plan_launch(lesson, problem_);
  const size_t bytes = workspace.plan.workspace_bytes;
  if (bytes != workspace.memory.bytes()) {
    workspace.memory.resize(bytes);  // new memory: its contents are unknown
    workspace.zeroed = false;
  }
  args.workspace = bytes > 0 ? workspace.memory.get() : nullptr;
  return args;
}

void LessonRunner::prepare_workspace(const Lesson& lesson, Workspace& workspace,
                                     cudaStream_t stream) {
  if (!lesson.zeroed_workspace || workspace.memory.bytes() == 0) return;
  if (!(lesson.workspace_resets_itself && workspace.zeroed))
    CUDA_CHECK(cudaMemsetAsync(workspace.memory.get(), 0, workspace.memory.bytes(), stream));
  // What the launch that follows leaves: zeros again only if the lesson resets them itself.
  workspace.zeroed = lesson.workspace_resets_itself;
}

void LessonRunner::launch(const Lesson& lesson) {
  const GemmArgs lesson_args = args(lesson, workspace_);
  prepare_workspace(lesson, workspace_, stream_);
  launch_planned(lesson, lesson_args, workspace_.plan, stream_);
  CUDA_CHECK(cudaGetLastError());
}

bool LessonRunner::cpu_reference_fits() const {
  return double(problem_.m) * double(problem_.n) * double(problem_.k) <= kCpuReferenceMaxMacs;
}

double LessonRunner::launch_timeout_seconds() const {
  // Generous: even the naive lesson runs at well over 50 GFLOP/s.
  return 60.0 + problem_.flops() / 5e10;
}

CheckPlan check_plan(const Lesson& lesson) {
  CheckPlan plan;
  plan.other_inputs_first = lesson.workspace_resets_itself || lesson.waits_for_prerequisite;
  plan.late_inputs = lesson.waits_for_prerequisite;
  plan.flags_checked =
      lesson.workspace_resets_itself && (lesson.plan || lesson.workspace_flag_bytes != nullptr);
  return plan;
}

CheckResult LessonRunner::check(const Lesson& lesson) {
  const CheckPlan plan = check_plan(lesson);
  if (plan.other_inputs_first) launch_on_other_inputs(lesson);
  EarlyWrites early_writes;
  if (plan.late_inputs) {
    early_writes = launch_with_late_inputs(lesson);  // poisons D itself
  } else {
    poison(d_.get(), d_.size(), stream_);
    launch(lesson);
    synchronize_or_timeout(stream_, launch_timeout_seconds());
  }
  CheckResult result = verify_current_output(lesson.operands);
  result.early_writes = early_writes;
  if (plan.flags_checked) result.flag_bytes_left_set = flag_bytes_left_set(lesson);
  return result;
}

int64_t LessonRunner::flag_bytes_left_set(const Lesson& lesson) {
  const size_t bytes = std::min(workspace_.plan.workspace_flag_bytes, workspace_.memory.bytes());
  std::vector<unsigned char> flags(bytes);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (bytes > 0)
    CUDA_CHECK(cudaMemcpy(flags.data(), workspace_.memory.get(), bytes, cudaMemcpyDeviceToHost));
  return std::count_if(flags.begin(), flags.end(), [](unsigned char byte) { return byte != 0; });
}

void LessonRunner::launch_on_other_inputs(const Lesson& lesson) {
  // Seeds that the problem's own inputs (4 * seed + 0..3, set_problem) never use.
  DeviceBuffer<bf16> other_a(a_.size()), other_b(b_.size());
  fill_uniform(other_a.get(), other_a.size(), ~(4 * seed_), stream_);
  fill_uniform(other_b.get(), other_b.size(), ~(4 * seed_ + 1), stream_);
  GemmArgs other_args = args(lesson, workspace_);
  other_args.a = other_a.get();
  other_args.b = other_b.get();
  prepare_workspace(lesson, workspace_, stream_);
  launch_planned(lesson, other_args, workspace_.plan, stream_);
  CUDA_CHECK(cudaGetLastError());
  // The buffers must outlive the launch.
  synchronize_or_timeout(stream_, launch_timeout_seconds());
}

EarlyWrites LessonRunner::launch_with_late_inputs(const Lesson& lesson) {
  // Each input saved, then poisoned; the writer ahead of the lesson copies it back, late.
  DeviceBuffer<bf16> saved[kMaxLateCopies];
  LateCopy copies[kMaxLateCopies];
  int count = 0;
  for (DeviceBuffer<bf16>* input : {&a_, &b_, &c_, &bias_}) {
    if (input->size() == 0) continue;
    saved[count].resize(input->size());
    CUDA_CHECK(cudaMemcpyAsync(saved[count].get(), input->get(), input->size() * sizeof(bf16),
                               cudaMemcpyDeviceToDevice, stream_));
    poison(input->get(), input->size(), stream_);
    copies[count] = {saved[count].get(), input->get(), int64_t(input->size())};
    ++count;
  }
  poison(d_.get(), d_.size(), stream_);
  const GemmArgs lesson_args = args(lesson, workspace_);
  prepare_workspace(lesson, workspace_, stream_);
  // What the lesson writes, as it is before the lesson starts: the writer compares it with these
  // snapshots when it is done. D is watched with its guard zone, the workspace in 2-byte words.
  DeviceBuffer<uint16_t> d_snapshot(d_.size()), workspace_snapshot(workspace_.memory.bytes() / 2);
  CUDA_CHECK(cudaMemcpyAsync(d_snapshot.get(), d_.get(), d_.bytes(), cudaMemcpyDeviceToDevice,
                             stream_));
  if (workspace_snapshot.size() > 0)
    CUDA_CHECK(cudaMemcpyAsync(workspace_snapshot.get(), workspace_.memory.get(),
                               workspace_snapshot.bytes(), cudaMemcpyDeviceToDevice, stream_));
  const LateWatch watches[kMaxLateWatches] = {
      {reinterpret_cast<const uint16_t*>(d_.get()), d_snapshot.get(), int64_t(d_snapshot.size())},
      {reinterpret_cast<const uint16_t*>(workspace_.memory.get()), workspace_snapshot.get(),
       int64_t(workspace_snapshot.size())}};
  LateInputWriter writer;
  writer.enqueue(copies, count, watches, kMaxLateWatches, stream_);
  launch_planned(lesson, lesson_args, workspace_.plan, stream_);  // right behind the writer: its dependent
  writer.open_gate();
  CUDA_CHECK(cudaGetLastError());
  // The saved copies and the snapshots must outlive the writer.
  synchronize_or_timeout(stream_, launch_timeout_seconds());
  EarlyWrites early;
  early.d_elements = writer.changed_words(0);
  early.workspace_words = writer.changed_words(1);
  return early;
}

CheckResult LessonRunner::verify_current_output(Operands operands) {
  reference_.resize(size_t(d_elements()));
  if (operands == Operands::e4m3_block_scaled) return verify_block_scaled_output();
  const Epilogue fused = epilogue();
  if (fused.is_plain())
    cublas_.run_fp32_output(problem_, a_.get(), b_.get(), reference_.get(), stream_);
  else
    epilogue_reference_->run(problem_, a_.get(), b_.get(), fused, reference_.get(), CUDA_R_32F,
                             stream_);
  CheckResult result;
  result.against_cublas = verify_on_device(d_.get(), reference_.get(), d_elements(),
                                           d_.get() + d_elements(), guard_elements(), stream_);

  const std::vector<bf16> d = download_d();
  result.output_hash = fnv1a(d.data(), d.size() * sizeof(bf16));
  if (cpu_reference_fits()) {
    const std::vector<float> a = download_as_float(a_.get(), a_.size());
    const std::vector<float> b = download_as_float(b_.get(), b_.size());
    std::vector<double> expected = cpu_gemm_fp64(a, b, problem_);
    if (!fused.is_plain())
      expected = cpu_epilogue_fp64(expected, problem_, fused, download_as_float(c_.get(), c_.size()),
                                   download_as_float(bias_.get(), bias_.size()));
    result.against_cpu = verify_on_host(d, expected);
  }
  return result;
}

CheckResult LessonRunner::verify_block_scaled_output() {
  // The values the operands stand for, in fp32; their product; the product of their magnitudes
  // (sum over K of |a| |b|), which the allowance for the tensor cores' fp8 sums scales with.
  DeviceBuffer<float> a(a_.size()), b(b_.size()), magnitude(static_cast<size_t>(d_elements()));
  dequantize(problem_, fp8_inputs_->operands(), a.get(), b.get(), stream_);
  cublas_.run_fp32_inputs(problem_, a.get(), b.get(), reference_.get(), stream_);
  const bool on_cpu = cpu_reference_fits();
  std::vector<float> host_a, host_b;
  if (on_cpu) {
    host_a = download_floats(a.get(), a.size(), stream_);
    host_b = download_floats(b.get(), b.size(), stream_);
  }
  absolute_values(a.get(), int64_t(a.size()), stream_);
  absolute_values(b.get(), int64_t(b.size()), stream_);
  cublas_.run_fp32_inputs(problem_, a.get(), b.get(), magnitude.get(), stream_);
  const double per_unit = fp8_allowance_per_unit(problem_.k);
  CheckResult result;
  result.against_cublas = verify_on_device(d_.get(), reference_.get(), d_elements(),
                                           d_.get() + d_elements(), guard_elements(), stream_,
                                           ExtraAllowance{magnitude.get(), per_unit});
  const std::vector<bf16> d = download_d();
  result.output_hash = fnv1a(d.data(), d.size() * sizeof(bf16));
  if (on_cpu) {
    const std::vector<double> expected = cpu_gemm_fp64(host_a, host_b, problem_);
    for (float& value : host_a) value = std::fabs(value);
    for (float& value : host_b) value = std::fabs(value);
    result.against_cpu =
        verify_on_host(d, expected, cpu_gemm_fp64(host_a, host_b, problem_), per_unit);
  }
  return result;
}

double LessonRunner::relative_rms_error_against_bf16_product() {
  reference_.resize(size_t(d_elements()));
  cublas_.run_fp32_output(problem_, a_.get(), b_.get(), reference_.get(), stream_);
  return relative_rms_error(d_.get(), reference_.get(), d_elements(), stream_);
}

std::vector<bf16> LessonRunner::download_d() const {
  std::vector<bf16> d(static_cast<size_t>(d_elements()));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  CUDA_CHECK(cudaMemcpy(d.data(), d_.get(), d.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
  return d;
}

void LessonRunner::fill_workspace(const Lesson& lesson, unsigned char byte) {
  args(lesson, workspace_);
  if (workspace_.memory.bytes() > 0)
    CUDA_CHECK(cudaMemsetAsync(workspace_.memory.get(), byte, workspace_.memory.bytes(), stream_));
  workspace_.zeroed = false;
}

namespace {
// Lesson 18's reference: cuBLASLt's block-scaled fp8 where it takes the shape, else its
// per-tensor fp8.
Fp8Scaling reference_scaling(const GemmProblem& problem) {
  return Fp8Reference::block_scaling_takes(problem) ? Fp8Scaling::block : Fp8Scaling::per_tensor;
}
}  // namespace

std::string LessonRunner::reference_name() const {
  if (operands_ == Operands::e4m3_block_scaled)
    return Fp8Reference::describe(reference_scaling(problem_));
  const Epilogue fused = epilogue();
  return fused.is_plain() ? "cuBLAS" : epilogue_reference_->describe(fused);
}

RunReport LessonRunner::check_and_time(const Lesson& lesson, const TimingOptions& options) {
  RunReport report;
  report.lesson = &lesson;
  report.device = device_;
  report.problem = problem_;
  report.seed = seed_;
  report.epilogue = epilogue_options_;
  report.check = check(lesson);
  report.configuration = configuration_that_ran(lesson);
  if (report.check->passed()) {
    report.reference_name = reference_name();
    report.timing = time_against_reference(lesson, options);
  }
  return report;
}

PairedTiming LessonRunner::time_lesson_with(const Lesson& lesson, const PairedTimer::Operation& other,
                                            const TimingOptions& options) {
  const GemmArgs lesson_args = args(lesson, workspace_);
  const LaunchPlan& plan = workspace_.plan;
  return timer_.time([&](cudaStream_t stream) { launch_planned(lesson, lesson_args, plan, stream); },
                     other,
                     options, stream_,
                     [&](cudaStream_t stream) { prepare_workspace(lesson, workspace_, stream); });
}

PairedTiming LessonRunner::time_against_fp8(const Lesson& lesson, Fp8Scaling scaling,
                                            const TimingOptions& options) {
  return time_lesson_with(
      lesson,
      [&](cudaStream_t stream) {
        fp8_reference_->run(problem_, scaling, *fp8_inputs_, d_.get(), stream);
      },
      options);
}

PairedTiming LessonRunner::time_quantization(const Lesson& lesson, const TimingOptions& options) {
  // Into the operands' own buffers: the same values again.
  return time_lesson_with(
      lesson,
      [&](cudaStream_t stream) {
        fp8_inputs_->quantize_blocks(problem_, a_.get(), b_.get(), stream);
      },
      options);
}

PairedTiming LessonRunner::time_against_reference(const Lesson& lesson,
                                                  const TimingOptions& options) {
  if (lesson.operands == Operands::e4m3_block_scaled)
    return time_against_fp8(lesson, reference_scaling(problem_), options);
  const Epilogue fused = epilogue();
  return time_lesson_with(
      lesson,
      [&](cudaStream_t stream) {
        if (fused.is_plain())
          cublas_.run_bf16_output(problem_, a_.get(), b_.get(), d_.get(), stream);
        else
          epilogue_reference_->run(problem_, a_.get(), b_.get(), fused, d_.get(), CUDA_R_16BF,
                                   stream);
      },
      options);
}

PairedTiming LessonRunner::time_against_lesson(const Lesson& lesson, const Lesson& baseline,
                                               const TimingOptions& options) {
  const GemmArgs lesson_args = args(lesson, workspace_);
  const GemmArgs baseline_args = args(baseline, baseline_workspace_);
  // Each lesson has its own workspace, zeroed (where it must be) outside the timed runs.
  return timer_.time(
      [&](cudaStream_t stream) { launch_planned(lesson, lesson_args, workspace_.plan, stream); },
      [&](cudaStream_t stream) {
        launch_planned(baseline, baseline_args, baseline_workspace_.plan, stream);
      },
      options, stream_,
      [&](cudaStream_t stream) { prepare_workspace(lesson, workspace_, stream); },
      [&](cudaStream_t stream) { prepare_workspace(baseline, baseline_workspace_, stream); });
}

}  // namespace gemm
