// The report of a lesson's run: the human table, the CSV row of `make bench` and the JSON of the
// grader (common/harness/runner.hpp).
#include "common/harness/runner.hpp"

#include <sstream>

#include "common/harness/text_format.hpp"

namespace gemm {
namespace {
std::string percent(double ratio) { return format_number("%.1f%%", 100.0 * ratio); }
}  // namespace

std::string format_table(const RunReport& report) {
  const std::string name = lesson_name(*report.lesson);
  std::ostringstream out;
  out << name << "  " << report.lesson->slug << ": " << report.lesson->title << "\n";
  out << "GPU       " << report.device.name << " (compute capability " << report.device.major << "."
      << report.device.minor << ", " << report.device.sm_count << " SMs)\n";
  out << "problem   M=" << report.problem.m << " N=" << report.problem.n << " K=" << report.problem.k
      << "  (" << report.inputs << "; seed " << report.seed << ")\n";
  if (report.epilogue.given) out << "epilogue  " << describe_epilogue(report.epilogue) << "\n";
  if (!report.configuration.empty())
    out << "config    " << report.configuration
        << (report.lesson->forced_configuration >= 0 ? " (--config)" : " (the cost model's choice)")
        << "\n";
  if (report.check) {
    const CheckResult& check = *report.check;
    out << "check     " << (check.against_cublas.passed() ? "PASS" : "FAIL") << " vs "
        << report.check_reference << ": " << check.against_cublas.summary(report.problem.n) << "\n";
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

std::string describe_lesson(const Lesson& lesson) {
  const WorkloadKind& kind = *lesson.workload;
  std::ostringstream out;
  out << "{\"lesson\": " << lesson.id << ", \"slug\": \"" << json_escape(lesson.slug ? lesson.slug : "")
      << "\", \"operands\": \"" << json_escape(kind.name) << "\", \"k_multiple\": " << kind.k_multiple
      << ", \"dense_flop_per_clock_per_sm\": " << kind.dense_flop_per_clock_per_sm
      << ", \"fused_epilogue\": " << (lesson.fused_epilogue ? "true" : "false")
      << ", \"configurations\": [";
  for (int i = 0; i < lesson.configuration_count; ++i)
    out << (i ? ", " : "") << "\"" << json_escape(lesson.configurations[i].name) << "\"";
  out << "]}";
  return out.str();
}

}  // namespace gemm
