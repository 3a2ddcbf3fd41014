// run_lesson(): the whole life of a lesson executable (common/harness/runner.hpp): its command line, the
// checks of the GPU and the flags, the run, the report and the exit status.
#include "common/harness/runner.hpp"

#include <cstdio>
#include <fstream>

#include "common/cuda_check.hpp"
#include "common/harness/text_format.hpp"
#include "common/launch.hpp"

namespace gemm {
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
  if (options.describe) {
    std::printf("%s\n", describe_lesson(lesson).c_str());
    return kExitPass;
  }
  if (const auto violation = lesson.workload->contract_violation(options.problem))
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
    runner.set_problem(options.problem, options.seed, options.epilogue, *lesson.workload);

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

    RunReport report = runner.report_for(chosen);
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
        report.reference_name = runner.reference_name(chosen);
        report.timing = runner.time_against_reference(chosen, timing);
        // What else the lesson's workload pairs it with (lesson 18: cuBLASLt's per-tensor fp8,
        // and the quantization of A and B).
        report.comparisons = runner.time_comparisons(chosen, timing);
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
