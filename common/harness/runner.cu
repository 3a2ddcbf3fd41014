// The LessonRunner (common/harness/runner.hpp): a lesson's inputs, workspace, launches, checks and paired
// timings on one GPU, which the executables, the tests, the benchmark and the grader share.
#include "common/harness/runner.hpp"

#include <algorithm>
#include <cmath>

#include "common/cuda_check.hpp"
#include "common/harness/late_inputs.hpp"
#include "common/harness/random.hpp"

namespace gemm {

namespace {

// FNV-1a over D's bytes: two runs on the same inputs must give the same hash, bit for bit.
uint64_t fnv1a(const void* data, size_t bytes) {
  const unsigned char* byte = static_cast<const unsigned char*>(data);
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ byte[i]) * 1099511628211ull;
  return hash;
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
                               const EpilogueOptions& epilogue, const WorkloadKind& kind) {
  problem_ = problem;
  seed_ = seed;
  epilogue_options_ = epilogue;
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
  // What the kind's lessons read, made from the bf16 inputs just drawn.
  inputs_kind_ = &kind;
  workload(kind).make_inputs(buffers(), stream_);
}

Workload& LessonRunner::workload(const WorkloadKind& kind) {
  std::unique_ptr<Workload>& made = workloads_[&kind];
  if (!made) made = kind.make();
  return *made;
}

ProblemBuffers LessonRunner::buffers() const {
  ProblemBuffers buffers;
  buffers.problem = problem_;
  buffers.seed = seed_;
  buffers.epilogue = epilogue();
  buffers.a = a_.get();
  buffers.b = b_.get();
  buffers.d = d_.get();
  buffers.guard_elements = guard_elements();
  return buffers;
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
  Workload& lesson_workload = workload(*lesson.workload);
  if (lesson.workload != inputs_kind_ && !lesson_workload.reads_only_bf16_inputs())
    throw std::logic_error(lesson_name(lesson) + " reads " + lesson.workload->name +
                           " operands: set_problem must make them (its kind of workload)");
  lesson_workload.add_operands(args);
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
  plan.flags_checked = lesson.workspace_resets_itself;
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
  CheckResult result = verify_current_output(*lesson.workload);
  result.early_writes = early_writes;
  if (plan.flags_checked) result.flag_bytes_left_set = flag_bytes_left_set();
  return result;
}

int64_t LessonRunner::flag_bytes_left_set() {
  const size_t bytes = std::min(workspace_.plan.workspace_flag_bytes, workspace_.memory.bytes());
  const std::vector<unsigned char> flags = download(workspace_.memory.get(), bytes, stream_);
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

CheckResult LessonRunner::verify_current_output(const WorkloadKind& kind) {
  CheckResult result = workload(kind).verify(buffers(), cpu_reference_fits(), stream_);
  const std::vector<bf16> d = download_d();
  result.output_hash = fnv1a(d.data(), d.size() * sizeof(bf16));
  return result;
}

double LessonRunner::relative_rms_error_against_bf16_product() {
  reference_.resize(size_t(d_elements()));
  cublas_.run_fp32_output(problem_, a_.get(), b_.get(), reference_.get(), stream_);
  return relative_rms_error(d_.get(), reference_.get(), d_elements(), stream_);
}

std::vector<bf16> LessonRunner::download_d() const {
  return download(d_.get(), size_t(d_elements()), stream_);
}

void LessonRunner::fill_workspace(const Lesson& lesson, unsigned char byte) {
  args(lesson, workspace_);
  if (workspace_.memory.bytes() > 0)
    CUDA_CHECK(cudaMemsetAsync(workspace_.memory.get(), byte, workspace_.memory.bytes(), stream_));
  workspace_.zeroed = false;
}

std::string LessonRunner::reference_name(const Lesson& lesson) {
  return workload(*lesson.workload).timing_reference_name(buffers());
}

RunReport LessonRunner::report_for(const Lesson& lesson) {
  RunReport report;
  report.lesson = &lesson;
  report.device = device_;
  report.problem = problem_;
  report.seed = seed_;
  report.epilogue = epilogue_options_;
  Workload& kind = workload(*lesson.workload);
  report.inputs = kind.describe_inputs();
  report.check_reference = kind.check_reference_name(buffers());
  return report;
}

RunReport LessonRunner::check_and_time(const Lesson& lesson, const TimingOptions& options) {
  RunReport report = report_for(lesson);
  report.check = check(lesson);
  report.configuration = configuration_that_ran(lesson);
  if (report.check->passed()) {
    report.reference_name = reference_name(lesson);
    report.timing = time_against_reference(lesson, options);
  }
  return report;
}

PairedTiming LessonRunner::time_against(const Lesson& lesson, const PairedTimer::Operation& other,
                                        const TimingOptions& options) {
  const GemmArgs lesson_args = args(lesson, workspace_);
  const LaunchPlan& plan = workspace_.plan;
  return timer_.time([&](cudaStream_t stream) { launch_planned(lesson, lesson_args, plan, stream); },
                     other,
                     options, stream_,
                     [&](cudaStream_t stream) { prepare_workspace(lesson, workspace_, stream); });
}

PairedTiming LessonRunner::time_against_reference(const Lesson& lesson,
                                                  const TimingOptions& options) {
  Workload& reference = workload(*lesson.workload);
  const ProblemBuffers problem = buffers();
  return time_against(
      lesson, [&](cudaStream_t stream) { reference.run_timing_reference(problem, stream); },
      options);
}

std::vector<RunReport::Comparison> LessonRunner::time_comparisons(const Lesson& lesson,
                                                                  const TimingOptions& options) {
  std::vector<RunReport::Comparison> timed;
  for (const Workload::Comparison& comparison : workload(*lesson.workload).comparisons(buffers()))
    timed.push_back({comparison.name, time_against(lesson, comparison.run, options)});
  return timed;
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
