#include "common/runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/cuda_check.hpp"
#include "common/device_facts.hpp"
#include "common/epilogue_reference.hpp"
#include "common/late_inputs.hpp"
#include "common/launch.hpp"
#include "common/random.hpp"
#include "common/text_format.hpp"

// The CUDA architectures this build targets (CMAKE_CUDA_ARCHITECTURES), set by CMake.
#ifndef GEMM_CUDA_ARCHITECTURES
#error "GEMM_CUDA_ARCHITECTURES must be defined by the build"
#endif

namespace gemm {
namespace {

// Can code built for `arch` (an entry of CMAKE_CUDA_ARCHITECTURES such as "80", "90a" or
// "90-real") run on a GPU of compute capability major.minor? Arch-specific targets ("90a") run
// only on exactly that GPU; plain ones carry PTX that the driver compiles for newer GPUs.
bool arch_runs_on(const std::string& arch, int major, int minor) {
  if (arch.size() < 2) return false;
  const int number = std::stoi(arch.substr(0, 2));
  const int device = major * 10 + minor;
  if (arch.size() > 2 && arch[2] == 'a') return number == device;
  return number <= device;
}

}  // namespace

std::optional<std::string> unsupported_reason(const Lesson& lesson, const DeviceInfo& device) {
  const std::string gpu = device.name + " (compute capability " + std::to_string(device.major) +
                          "." + std::to_string(device.minor) + ")";
  if (lesson.min_arch == MinArch::sm90a && !(device.major == 9 && device.minor == 0))
    return "lesson " + std::to_string(lesson.id) +
           " needs a Hopper GPU with the sm_90a target (compute capability 9.0: wgmma, TMA, "
           "setmaxnreg); this GPU is " + gpu;
  if (device.major < 8)
    return "lesson " + std::to_string(lesson.id) +
           " needs compute capability 8.0 or newer (bf16 tensor cores, cp.async); this GPU is " + gpu;

  // GEMM_CUDA_ARCHITECTURES is CMAKE_CUDA_ARCHITECTURES with commas: "90a" or "80,90a".
  std::stringstream architectures(GEMM_CUDA_ARCHITECTURES);
  std::string arch;
  bool runs_here = false, has_sm90a = false;
  while (std::getline(architectures, arch, ',')) {
    runs_here = runs_here || arch_runs_on(arch, device.major, device.minor);
    has_sm90a = has_sm90a || arch.rfind("90a", 0) == 0;
  }
  const std::string rebuild = "; rebuild with -DCMAKE_CUDA_ARCHITECTURES=\"" +
                              std::to_string(device.major * 10 + device.minor) + ";90a\"";
  if (!runs_here)
    return std::string("this executable was built for CUDA architectures '") +
           GEMM_CUDA_ARCHITECTURES + "', none of which runs on " + gpu + rebuild;
  if (lesson.min_arch == MinArch::sm90a && !has_sm90a)
    return std::string("this executable was built without the 90a target that lesson ") +
           std::to_string(lesson.id) + " needs (built for '" + GEMM_CUDA_ARCHITECTURES + "')" +
           rebuild;
  return std::nullopt;
}

std::optional<std::string> epilogue_refusal(const Lesson& lesson, const EpilogueOptions& epilogue) {
  if (!epilogue.given || lesson.fused_epilogue) return std::nullopt;
  return "--alpha, --beta, --bias and --act belong to lesson 15's fused epilogue; " +
         lesson_name(lesson) + " computes the plain D = A * B^T";
}

std::optional<std::string> configuration_refusal(const Lesson& lesson, const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (lesson.configuration_count == 0)
    return "--config chooses one of the compiled configurations of lessons 16-18; " +
           lesson_name(lesson) + " has one";
  if (find_configuration(lesson, name) >= 0) return std::nullopt;
  std::string names;
  for (int i = 0; i < lesson.configuration_count; ++i)
    names += (i ? ", " : "") + std::string(lesson.configurations[i].name);
  return "no configuration '" + name + "' in " + lesson_name(lesson) + " (" + names + ")";
}

std::string describe_epilogue(const EpilogueOptions& epilogue) {
  std::string inner = "A*B^T";
  if (epilogue.alpha != 1.0f) inner = format_number("%g", epilogue.alpha) + " * " + inner;
  if (epilogue.beta != 0.0f) inner += " + " + format_number("%g", epilogue.beta) + " * C";
  if (epilogue.bias) inner += " + bias";
  if (epilogue.activation == Activation::none) return "D = " + inner;
  return std::string("D = ") + activation_name(epilogue.activation) + "(" + inner + ")";
}

// ---- LessonRunner ---------------------------------------------------------------------------

DeviceInfo query_device(int ordinal) {
  CUDA_CHECK(cudaSetDevice(ordinal));
  const DeviceFacts facts = query_device_facts(ordinal);
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = facts.name;
  info.major = facts.compute_capability_major;
  info.minor = facts.compute_capability_minor;
  info.sm_count = facts.sm_count;
  info.l2_bytes = size_t(facts.l2_cache_bytes);
  return info;
}

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
// ---- Reports --------------------------------------------------------------------------------

namespace {
std::string percent(double ratio) { return format_number("%.1f%%", 100.0 * ratio); }
}  // namespace

std::string format_table(const RunReport& report) {
  const std::string name = lesson_name(*report.lesson);
  std::ostringstream out;
  out << name << "  " << report.lesson->slug << ": " << report.lesson->title << "\n";
  out << "GPU       " << report.device.name << " (compute capability " << report.device.major << "."
      << report.device.minor << ", " << report.device.sm_count << " SMs)\n";
  const bool fp8 = report.lesson->operands == Operands::e4m3_block_scaled;
  out << "problem   M=" << report.problem.m << " N=" << report.problem.n << " K=" << report.problem.k
      << (fp8 ? "  (e4m3 in with 1x128 / 128x128 fp32 scales, fp32 accumulate, bf16 out; seed "
              : "  (bf16 in, fp32 accumulate, bf16 out; seed ")
      << report.seed << ")\n";
  if (report.epilogue.given) out << "epilogue  " << describe_epilogue(report.epilogue) << "\n";
  if (!report.configuration.empty())
    out << "config    " << report.configuration
        << (report.lesson->forced_configuration >= 0 ? " (--config)" : " (the cost model's choice)")
        << "\n";
  if (report.check) {
    const CheckResult& check = *report.check;
    out << "check     " << (check.against_cublas.passed() ? "PASS" : "FAIL") << " vs "
        << (fp8 ? std::string("cuBLAS fp32 of the dequantized operands")
                : report.epilogue.given ? report.reference_name + " fp32" : std::string("cuBLAS fp32"))
        << ": " << check.against_cublas.summary(report.problem.n) << "\n";
    if (check.against_cpu)
      out << "          " << (check.against_cpu->passed() ? "PASS" : "FAIL")
          << " vs fp64 on the CPU: " << check.against_cpu->summary(report.problem.n) << "\n";
    if (check.flag_bytes_left_set > 0)
      out << "          FAIL: the launch left " << check.flag_bytes_left_set
          << " bytes of its workspace's flags set: the next launch, on a workspace zeroed once,"
             " would take them for parts already counted\n";
    if (check.early_writes.any())
      out << "          FAIL: the kernel wrote before the kernel ahead of it had finished ("
          << check.early_writes.d_elements << " elements of D, "
          << check.early_writes.workspace_words
          << " 2-byte words of the workspace): that kernel may still read them\n";
  } else {
    out << "check     skipped (--no-check)\n";
  }
  const PairedTiming& timing = report.timing;
  if (timing.timed()) {
    out << "time      " << timing.pairs
        << " pairs, the two sides alternating, L2 flushed before each run\n";
    out << "          median ms    min ms    max ms   TFLOP/s\n";
    const auto row = [&](const std::string& label, const TimingStats& t, double tflops) {
      char line[160];
      std::snprintf(line, sizeof(line), "%-9s %9.4f %9.4f %9.4f %9.1f\n", label.c_str(),
                    t.median_ms, t.min_ms, t.max_ms, tflops);
      out << line;
    };
    row(name, timing.lesson, report.lesson_tflops());
    row(report.reference_name.size() <= 9 ? report.reference_name : "reference", timing.reference,
        report.reference_tflops());
    out << "result    " << name << " runs at " << percent(timing.ratio) << " of "
        << report.reference_name << " (median of the per-pair ratios; pairs ranged "
        << percent(timing.ratio_min) << " to " << percent(timing.ratio_max) << ")\n";
    out << "clock     " << timing.clock.summary() << "\n";
  }
  for (const RunReport::Comparison& comparison : report.comparisons) {
    const PairedTiming& paired = comparison.timing;
    char line[320];
    std::snprintf(line, sizeof(line),
                  "also      %s: %.4f ms (%.1f TFLOP/s); %s %.4f ms: %s of it (%d pairs)\n",
                  comparison.name.c_str(), paired.reference.median_ms,
                  report.problem.flops() / (paired.reference.median_ms * 1e9), name.c_str(),
                  paired.lesson.median_ms, percent(paired.ratio).c_str(), paired.pairs);
    out << line;
  }
  return out.str();
}

std::string csv_header() {
  return "lesson,slug,m,n,k,seed,epilogue,check,max_normalized_error,mismatches,pairs,"
         "lesson_median_ms,lesson_min_ms,lesson_max_ms,lesson_tflops,reference,"
         "reference_median_ms,reference_min_ms,reference_max_ms,reference_tflops,"
         "ratio,ratio_min,ratio_max,sm_mhz_median,sm_mhz_min,sm_mhz_max,power_w_peak,throttle,gpu,"
         "configuration";
}

std::string format_csv_row(const RunReport& report) {
  std::ostringstream out;
  const PairedTiming& timing = report.timing;
  const auto number = [&](const char* format, double value) {
    return timing.timed() ? format_number(format, value) : std::string();
  };
  const auto clock_number = [&](double value) {
    return timing.timed() && timing.clock.available ? format_number("%.0f", value) : std::string();
  };
  out << report.lesson->id << "," << report.lesson->slug << "," << report.problem.m << ","
      << report.problem.n << "," << report.problem.k << "," << report.seed << ","
      << (report.epilogue.given ? describe_epilogue(report.epilogue) : std::string("plain")) << ",";
  if (report.check)
    out << (report.check->passed() ? "pass" : "fail") << ","
        << format_number("%.4g", report.check->against_cublas.max_normalized_error) << ","
        << report.check->against_cublas.mismatches << ",";
  else
    out << "skipped,,,";
  out << (timing.timed() ? std::to_string(timing.pairs) : std::string()) << ","
      << number("%.4f", timing.lesson.median_ms) << "," << number("%.4f", timing.lesson.min_ms)
      << "," << number("%.4f", timing.lesson.max_ms) << "," << number("%.2f", report.lesson_tflops())
      << "," << (timing.timed() ? report.reference_name : std::string()) << ","
      << number("%.4f", timing.reference.median_ms) << ","
      << number("%.4f", timing.reference.min_ms) << "," << number("%.4f", timing.reference.max_ms)
      << "," << number("%.2f", report.reference_tflops()) << "," << number("%.4f", timing.ratio)
      << "," << number("%.4f", timing.ratio_min) << "," << number("%.4f", timing.ratio_max) << ","
      << clock_number(timing.clock.sm_mhz_median) << "," << clock_number(timing.clock.sm_mhz_min)
      << "," << clock_number(timing.clock.sm_mhz_max) << ","
      << clock_number(timing.clock.power_w_peak) << ","
      << (timing.timed() && timing.clock.available ? throttle_reason_names(timing.clock.throttle_reasons)
                                                   : std::string())
      << "," << report.device.name << "," << report.configuration;
  return out.str();
}

std::string format_json(const RunReport& report) {
  std::ostringstream out;
  const auto stats = [&](const TimingStats& t) {
    return "{\"median\": " + format_number("%.6g", t.median_ms) + ", \"min\": " +
           format_number("%.6g", t.min_ms) + ", \"max\": " + format_number("%.6g", t.max_ms) +
           ", \"samples\": " + std::to_string(t.samples) + "}";
  };
  out << "{\"lesson\": " << report.lesson->id << ", \"slug\": \"" << report.lesson->slug
      << "\", \"gpu\": \"" << json_escape(report.device.name)
      << "\", \"sm_count\": " << report.device.sm_count << ", \"m\": " << report.problem.m
      << ", \"n\": " << report.problem.n << ", \"k\": " << report.problem.k
      << ", \"seed\": " << report.seed << ", \"epilogue\": {\"alpha\": "
      << format_number("%.9g", report.epilogue.alpha)
      << ", \"beta\": " << format_number("%.9g", report.epilogue.beta)
      << ", \"bias\": " << (report.epilogue.bias ? "true" : "false") << ", \"activation\": \""
      << activation_name(report.epilogue.activation) << "\"}";
  if (!report.configuration.empty())
    out << ", \"configuration\": \"" << json_escape(report.configuration) << "\"";
  out << ", \"check\": ";
  if (report.check) {
    const VerifyReport& v = report.check->against_cublas;
    char hash[32];
    std::snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)report.check->output_hash);
    out << "{\"passed\": " << (report.check->passed() ? "true" : "false")
        << ", \"max_normalized_error\": "
        << (std::isfinite(v.max_normalized_error) ? format_number("%.6g", v.max_normalized_error)
                                                  : std::string("null"))
        << ", \"mismatches\": " << v.mismatches << ", \"nan_or_inf\": " << v.nan_or_inf
        << ", \"unwritten\": " << v.unwritten << ", \"guard_overwritten\": " << v.guard_overwritten
        << ", \"cpu_fp64_checked\": " << (report.check->against_cpu ? "true" : "false")
        << ", \"flag_bytes_left_set\": " << report.check->flag_bytes_left_set
        << ", \"early_writes\": {\"d_elements\": " << report.check->early_writes.d_elements
        << ", \"workspace_words\": " << report.check->early_writes.workspace_words << "}"
        << ", \"output_hash\": \"" << hash << "\"}";
  } else {
    out << "null";
  }
  const PairedTiming& timing = report.timing;
  if (timing.timed()) {
    const ClockReport& clock = timing.clock;
    out << ", \"reference\": \"" << json_escape(report.reference_name)
        << "\", \"pairs\": " << timing.pairs << ", \"lesson_ms\": " << stats(timing.lesson)
        << ", \"lesson_tflops\": " << format_number("%.6g", report.lesson_tflops())
        << ", \"reference_ms\": " << stats(timing.reference)
        << ", \"reference_tflops\": " << format_number("%.6g", report.reference_tflops())
        << ", \"ratio\": " << format_number("%.6g", timing.ratio)
        << ", \"ratio_min\": " << format_number("%.6g", timing.ratio_min)
        << ", \"ratio_max\": " << format_number("%.6g", timing.ratio_max)
        << ", \"clock\": {\"available\": " << (clock.available ? "true" : "false");
    if (clock.available)
      out << ", \"sm_mhz_median\": " << format_number("%.0f", clock.sm_mhz_median)
          << ", \"sm_mhz_min\": " << format_number("%.0f", clock.sm_mhz_min)
          << ", \"sm_mhz_max\": " << format_number("%.0f", clock.sm_mhz_max)
          << ", \"power_w_peak\": " << format_number("%.0f", clock.power_w_peak)
          << ", \"throttle\": \"" << throttle_reason_names(clock.throttle_reasons) << "\"";
    out << "}";
  }
  if (!report.comparisons.empty()) {
    out << ", \"comparisons\": [";
    for (size_t i = 0; i < report.comparisons.size(); ++i) {
      const PairedTiming& paired = report.comparisons[i].timing;
      out << (i ? ", " : "") << "{\"name\": \"" << json_escape(report.comparisons[i].name)
          << "\", \"pairs\": " << paired.pairs << ", \"lesson_ms\": " << stats(paired.lesson)
          << ", \"other_ms\": " << stats(paired.reference)
          << ", \"ratio\": " << format_number("%.6g", paired.ratio) << "}";
    }
    out << "]";
  }
  out << "}";
  return out.str();
}

// ---- run_lesson -----------------------------------------------------------------------------

namespace {

// What run_lesson and run_lesson_against share: everything but what the lesson is timed against.
// `baseline` null: against cuBLAS (or cuBLASLt for an epilogue).
int run(const Lesson& lesson, const Lesson* baseline, int argc, char** argv) {
  const std::string program = lesson_name(lesson);
  const auto fail = [&](int code, const std::string& message) {
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), message.c_str());
    return code;
  };

  RunOptions options;
  try {
    options = parse_run_options(argc, argv);
  } catch (const UsageError& error) {
    return fail(kExitBadUsage, std::string(error.what()) + " (see --help)");
  }
  if (options.help) {
    std::printf("%s", usage_text(program).c_str());
    return kExitPass;
  }
  const bool fp8 = lesson.operands == Operands::e4m3_block_scaled;
  if (const auto violation = fp8 ? block_scaled_contract_violation(options.problem)
                                 : shape_contract_violation(options.problem))
    return fail(kExitBadUsage, *violation);
  if (const auto refusal = epilogue_refusal(lesson, options.epilogue))
    return fail(kExitBadUsage, *refusal);
  if (const auto refusal = configuration_refusal(lesson, options.config))
    return fail(kExitBadUsage, *refusal);
  // --config: the entry that runs that configuration alone.
  const Lesson chosen = options.config.empty()
                             ? lesson
                             : with_configuration(lesson, find_configuration(lesson, options.config));

  if (const auto missing = missing_gpu()) return fail(kExitNoGpu, *missing);

  try {
    LessonRunner runner(0);
    if (const auto reason = unsupported_reason(chosen, runner.device()))
      return fail(kExitUnsupportedGpu, *reason);
    if (baseline)
      if (const auto reason = unsupported_reason(*baseline, runner.device()))
        return fail(kExitUnsupportedGpu, *reason);
    runner.set_problem(options.problem, options.seed, options.epilogue, lesson.operands);

    if (options.profile) {
      // Exactly two launches of the lesson's kernel (a warm-up and the one to profile), no cuBLAS
      // and no check, so a profiler filtering on this lesson's kernel sees nothing else. Alone on
      // the GPU, and without the cooperative launches that the profiler cannot replay.
      cooperative_launches() = false;
      runner.launch(chosen);
      runner.launch(chosen);
      synchronize_or_timeout(runner.stream(), 2 * runner.launch_timeout_seconds());
      std::fprintf(stderr, "%s: profile mode: launched the kernel twice (warm-up + profiled)\n",
                   program.c_str());
      return kExitPass;
    }

    RunReport report;
    report.lesson = &chosen;
    report.device = runner.device();
    report.problem = options.problem;
    report.seed = options.seed;
    report.epilogue = options.epilogue;
    if (options.check) report.check = runner.check(chosen);
    const bool check_failed = report.check && !report.check->passed();
    if (!check_failed && options.time) {
      TimingOptions timing;
      timing.warmup = options.warmup;
      timing.pairs = options.iters;
      if (baseline) {
        report.reference_name = lesson_name(*baseline) + " (reference solution)";
        report.timing = runner.time_against_lesson(chosen, *baseline, timing);
      } else {
        report.reference_name = runner.reference_name();
        report.timing = runner.time_against_reference(chosen, timing);
        // NEW in lesson 18: cuBLASLt's per-tensor fp8 too, and the quantization of A and B.
        if (fp8) {
          if (reference_scaling(options.problem) == Fp8Scaling::block)
            report.comparisons.push_back(
                {Fp8Reference::describe(Fp8Scaling::per_tensor),
                 runner.time_against_fp8(chosen, Fp8Scaling::per_tensor, timing)});
          report.comparisons.push_back({"quantizing A (1x128) and B (128x128) from bf16",
                                        runner.time_quantization(chosen, timing)});
        }
      }
    }
    if (report.check || report.timing.timed()) report.configuration = runner.configuration_that_ran(chosen);

    switch (options.format) {
      case OutputFormat::table: std::printf("%s", format_table(report).c_str()); break;
      case OutputFormat::csv:
        std::printf("%s\n%s\n", csv_header().c_str(), format_csv_row(report).c_str());
        break;
      case OutputFormat::json: std::printf("%s\n", format_json(report).c_str()); break;
    }
    std::fflush(stdout);
    if (!options.result_file.empty()) {
      std::ofstream file(options.result_file);
      file << format_json(report) << "\n";
      if (!file) return fail(kExitBadUsage, "cannot write the result file " + options.result_file);
    }
    return check_failed ? kExitCheckFailed : kExitPass;
  } catch (const std::exception& error) {
    return fail(kExitCudaError, error.what());
  }
}

}  // namespace

int run_lesson(const Lesson& lesson, int argc, char** argv) {
  return run(lesson, nullptr, argc, argv);
}

int run_lesson_against(const Lesson& lesson, const Lesson& baseline, int argc, char** argv) {
  return run(lesson, &baseline, argc, argv);
}

}  // namespace gemm
