#include "common/runner.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/random.hpp"

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

std::string json_escape(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) escaped += c;
  }
  return escaped;
}

std::string format_number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
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

// ---- LessonRunner ---------------------------------------------------------------------------

namespace {
DeviceInfo query_device(int ordinal) {
  CUDA_CHECK(cudaSetDevice(ordinal));
  cudaDeviceProp properties;
  CUDA_CHECK(cudaGetDeviceProperties(&properties, ordinal));
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = properties.name;
  info.major = properties.major;
  info.minor = properties.minor;
  info.sm_count = properties.multiProcessorCount;
  info.l2_bytes = size_t(properties.l2CacheSize);
  return info;
}
}  // namespace

LessonRunner::LessonRunner(int device_ordinal)
    : device_(query_device(device_ordinal)), timer_(device_.l2_bytes) {
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

LessonRunner::~LessonRunner() {
  if (stream_) cudaStreamDestroy(stream_);
}

void LessonRunner::set_problem(const GemmProblem& problem, uint64_t seed) {
  problem_ = problem;
  a_.resize(size_t(problem.m * problem.k));
  b_.resize(size_t(problem.n * problem.k));
  // The guard zone: up to 256 rows past the end of D, where a kernel that forgets to predicate
  // the last row tile of a ragged M would write.
  const int64_t guard = std::max<int64_t>(1024, std::min<int64_t>(256 * problem.n, int64_t(1) << 24));
  d_.resize(size_t(problem.m * problem.n + guard));
  // Different seeds for A and B, both derived from the one the user gave.
  fill_uniform(a_.get(), a_.size(), 2 * seed, stream_);
  fill_uniform(b_.get(), b_.size(), 2 * seed + 1, stream_);
}

GemmArgs LessonRunner::args(const Lesson& lesson) {
  GemmArgs args;
  args.problem = problem_;
  args.a = a_.get();
  args.b = b_.get();
  args.d = d_.get();
  if (lesson.workspace_bytes) {
    workspace_.resize(lesson.workspace_bytes(problem_));
    args.workspace = workspace_.get();
  }
  return args;
}

void LessonRunner::launch(const Lesson& lesson) {
  lesson.launch(args(lesson), stream_);
  CUDA_CHECK(cudaGetLastError());
}

double LessonRunner::launch_timeout_seconds() const {
  // Generous: even the naive lesson runs at well over 50 GFLOP/s.
  return 60.0 + problem_.flops() / 5e10;
}

CheckResult LessonRunner::check(const Lesson& lesson) {
  poison(d_.get(), d_.size(), stream_);
  launch(lesson);
  synchronize_or_timeout(stream_, launch_timeout_seconds());
  return verify_current_output();
}

CheckResult LessonRunner::verify_current_output() {
  reference_.resize(size_t(d_elements()));
  cublas_.run_fp32_output(problem_, a_.get(), b_.get(), reference_.get(), stream_);
  CheckResult result;
  result.against_cublas = verify_on_device(d_.get(), reference_.get(), d_elements(),
                                           d_.get() + d_elements(), guard_elements(), stream_);

  if (double(problem_.m) * double(problem_.n) * double(problem_.k) <= kCpuReferenceMaxMacs) {
    std::vector<bf16> a(a_.size()), b(b_.size());
    CUDA_CHECK(cudaMemcpy(a.data(), a_.get(), a_.bytes(), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(b.data(), b_.get(), b_.bytes(), cudaMemcpyDeviceToHost));
    std::vector<float> a_float(a.begin(), a.end()), b_float(b.begin(), b.end());
    result.against_cpu = verify_on_host(download_d(), cpu_gemm_fp64(a_float, b_float, problem_));
  }
  return result;
}

std::vector<bf16> LessonRunner::download_d() const {
  std::vector<bf16> d(static_cast<size_t>(d_elements()));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  CUDA_CHECK(cudaMemcpy(d.data(), d_.get(), d.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
  return d;
}

TimingStats LessonRunner::time_lesson(const Lesson& lesson, const TimingOptions& options) {
  const GemmArgs lesson_args = args(lesson);
  return timer_.time([&](cudaStream_t stream) { lesson.launch(lesson_args, stream); }, options,
                     stream_);
}

TimingStats LessonRunner::time_cublas(const TimingOptions& options) {
  return timer_.time(
      [&](cudaStream_t stream) {
        cublas_.run_bf16_output(problem_, a_.get(), b_.get(), d_.get(), stream);
      },
      options, stream_);
}

// ---- Reports --------------------------------------------------------------------------------

std::string format_table(const RunReport& report) {
  const std::string name = lesson_name(*report.lesson);
  std::ostringstream out;
  out << name << "  " << report.lesson->slug << ": " << report.lesson->title << "\n";
  out << "GPU       " << report.device.name << " (compute capability " << report.device.major << "."
      << report.device.minor << ", " << report.device.sm_count << " SMs)\n";
  out << "problem   M=" << report.problem.m << " N=" << report.problem.n << " K=" << report.problem.k
      << "  (bf16 in, fp32 accumulate, bf16 out; seed " << report.seed << ")\n";
  if (report.check) {
    const CheckResult& check = *report.check;
    out << "check     " << (check.against_cublas.passed() ? "PASS" : "FAIL") << " vs cuBLAS fp32: "
        << check.against_cublas.summary(report.problem.n) << "\n";
    if (check.against_cpu)
      out << "          " << (check.against_cpu->passed() ? "PASS" : "FAIL")
          << " vs fp64 on the CPU: " << check.against_cpu->summary(report.problem.n) << "\n";
  } else {
    out << "check     skipped (--no-check)\n";
  }
  if (report.lesson_time.samples > 0) {
    out << "time      median ms    min ms    max ms   TFLOP/s   (" << report.lesson_time.samples
        << " runs each, L2 flushed before each)\n";
    const auto row = [&](const std::string& label, const TimingStats& t, double tflops) {
      char line[160];
      std::snprintf(line, sizeof(line), "%-9s %9.4f %9.4f %9.4f %9.1f\n", label.c_str(),
                    t.median_ms, t.min_ms, t.max_ms, tflops);
      out << line;
    };
    row(name, report.lesson_time, report.lesson_tflops());
    row("cuBLAS", report.cublas_time, report.cublas_tflops());
    out << "result    " << name << " runs at " << format_number("%.1f", 100.0 * report.ratio_to_cublas())
        << "% of cuBLAS (median times, same run)\n";
  }
  return out.str();
}

std::string csv_header() {
  return "lesson,slug,m,n,k,seed,check,max_normalized_error,mismatches,"
         "lesson_median_ms,lesson_min_ms,lesson_max_ms,lesson_tflops,"
         "cublas_median_ms,cublas_min_ms,cublas_max_ms,cublas_tflops,ratio_to_cublas,gpu";
}

std::string format_csv_row(const RunReport& report) {
  std::ostringstream out;
  const bool timed = report.lesson_time.samples > 0;
  const auto number = [&](const char* format, double value) {
    return timed ? format_number(format, value) : std::string();
  };
  out << report.lesson->id << "," << report.lesson->slug << "," << report.problem.m << ","
      << report.problem.n << "," << report.problem.k << "," << report.seed << ",";
  if (report.check)
    out << (report.check->passed() ? "pass" : "fail") << ","
        << format_number("%.4g", report.check->against_cublas.max_normalized_error) << ","
        << report.check->against_cublas.mismatches << ",";
  else
    out << "skipped,,,";
  out << number("%.4f", report.lesson_time.median_ms) << "," << number("%.4f", report.lesson_time.min_ms)
      << "," << number("%.4f", report.lesson_time.max_ms) << "," << number("%.2f", report.lesson_tflops())
      << "," << number("%.4f", report.cublas_time.median_ms) << ","
      << number("%.4f", report.cublas_time.min_ms) << "," << number("%.4f", report.cublas_time.max_ms)
      << "," << number("%.2f", report.cublas_tflops()) << ","
      << number("%.4f", report.ratio_to_cublas()) << "," << report.device.name;
  return out.str();
}

std::string format_json(const RunReport& report) {
  std::ostringstream out;
  const auto timing = [&](const TimingStats& t) {
    return "{\"median\": " + format_number("%.6g", t.median_ms) + ", \"min\": " +
           format_number("%.6g", t.min_ms) + ", \"max\": " + format_number("%.6g", t.max_ms) +
           ", \"samples\": " + std::to_string(t.samples) + "}";
  };
  out << "{\"lesson\": " << report.lesson->id << ", \"slug\": \"" << report.lesson->slug
      << "\", \"gpu\": \"" << json_escape(report.device.name) << "\", \"m\": " << report.problem.m
      << ", \"n\": " << report.problem.n << ", \"k\": " << report.problem.k
      << ", \"seed\": " << report.seed << ", \"check\": ";
  if (report.check) {
    const VerifyReport& v = report.check->against_cublas;
    out << "{\"passed\": " << (report.check->passed() ? "true" : "false")
        << ", \"max_normalized_error\": "
        << (std::isfinite(v.max_normalized_error) ? format_number("%.6g", v.max_normalized_error)
                                                  : std::string("null"))
        << ", \"mismatches\": " << v.mismatches << ", \"nan_or_inf\": " << v.nan_or_inf
        << ", \"unwritten\": " << v.unwritten << ", \"guard_overwritten\": " << v.guard_overwritten
        << ", \"cpu_fp64_checked\": " << (report.check->against_cpu ? "true" : "false") << "}";
  } else {
    out << "null";
  }
  if (report.lesson_time.samples > 0)
    out << ", \"lesson_ms\": " << timing(report.lesson_time)
        << ", \"lesson_tflops\": " << format_number("%.6g", report.lesson_tflops())
        << ", \"cublas_ms\": " << timing(report.cublas_time)
        << ", \"cublas_tflops\": " << format_number("%.6g", report.cublas_tflops())
        << ", \"ratio_to_cublas\": " << format_number("%.6g", report.ratio_to_cublas());
  out << "}";
  return out.str();
}

// ---- run_lesson -----------------------------------------------------------------------------

int run_lesson(const Lesson& lesson, int argc, char** argv) {
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
  if (const auto violation = shape_contract_violation(options.problem))
    return fail(kExitBadUsage, *violation);

  int device_count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&device_count); status != cudaSuccess)
    return fail(kExitNoGpu, std::string("no CUDA GPU found (cudaGetDeviceCount: ") +
                                cudaGetErrorString(status) + ")");
  if (device_count == 0) return fail(kExitNoGpu, "no CUDA GPU found");

  try {
    LessonRunner runner(0);
    if (const auto reason = unsupported_reason(lesson, runner.device()))
      return fail(kExitUnsupportedGpu, *reason);
    runner.set_problem(options.problem, options.seed);

    if (options.profile) {
      // Exactly two launches of the lesson's kernel (a warm-up and the one to profile), no cuBLAS
      // and no check, so a profiler filtering on this lesson's kernel sees nothing else.
      runner.launch(lesson);
      runner.launch(lesson);
      synchronize_or_timeout(runner.stream(), 2 * runner.launch_timeout_seconds());
      std::fprintf(stderr, "%s: profile mode: launched the kernel twice (warm-up + profiled)\n",
                   program.c_str());
      return kExitPass;
    }

    RunReport report;
    report.lesson = &lesson;
    report.device = runner.device();
    report.problem = options.problem;
    report.seed = options.seed;
    if (options.check) report.check = runner.check(lesson);
    const bool check_failed = report.check && !report.check->passed();
    if (!check_failed) {
      const TimingOptions timing{options.warmup, options.iters};
      report.lesson_time = runner.time_lesson(lesson, timing);
      report.cublas_time = runner.time_cublas(timing);
    }

    switch (options.format) {
      case OutputFormat::table: std::printf("%s", format_table(report).c_str()); break;
      case OutputFormat::csv:
        std::printf("%s\n%s\n", csv_header().c_str(), format_csv_row(report).c_str());
        break;
      case OutputFormat::json: std::printf("%s\n", format_json(report).c_str()); break;
    }
    return check_failed ? kExitCheckFailed : kExitPass;
  } catch (const std::exception& error) {
    return fail(kExitCudaError, error.what());
  }
}

}  // namespace gemm
