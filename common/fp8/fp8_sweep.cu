#include "common/fp8/fp8_sweep.hpp"

#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/harness/cli.hpp"
#include "common/harness/command.hpp"
#include "common/harness/runner.hpp"
#include "common/harness/shape_sets.hpp"
#include "common/harness/text_format.hpp"
#include "common/workloads/block_scaled_e4m3.hpp"

namespace gemm {

int run_fp8_sweep_command(const Lesson& lesson, const Lesson& bf16_lesson, int argc, char** argv) {
  std::vector<GemmProblem> shapes = standard_sweep();
  bool alone = true;  // each configuration alone too
  CommandOutput output;
  const int read = read_command_line(
      "lesson18 sweep",
      "lesson18 sweep [--shapes standard|workloads|4096,8192x8192x1024] [--alone yes|no] "
      "[--csv FILE] [--commit SHA]",
      argc, argv, /*first=*/2, output,
      [&](const std::string& flag, const std::string& value) {
        if (flag == "--shapes") {
          const auto* named = named_shape_set(value);
          shapes = named ? *named : parse_shape_list(flag, value);
        } else if (flag == "--alone") {
          if (value != "yes" && value != "no")
            throw std::invalid_argument("--alone takes yes or no");
          alone = value == "yes";
        } else {
          return false;
        }
        return true;
      },
      [&] {
        for (const GemmProblem& shape : shapes)
          if (const auto violation = block_scaled_contract_violation(shape))
            throw std::invalid_argument(*violation);
      });
  if (read != kExitPass) return read;
  const std::string& commit = output.commit;
  try {
    int refused = kExitPass;
    const auto started = command_runner("lesson18 sweep", lesson, &refused);
    if (!started) return refused;
    LessonRunner& runner = *started;
    TimingOptions timing;
    timing.warmup = 2;
    timing.max_total_seconds = 1.0;
    std::ostringstream csv;
    csv << "m,n,k,configuration,check,error_over_allowed,fp8_rms_error,bf16_rms_error,"
           "lesson18_tflops,block_scaled_reference,vs_block_scaled,vs_per_tensor,vs_lesson16,"
           "lesson16_tflops,quantize_ms,sm_mhz_median,power_w_peak,with_quantized_d,"
           "with_e4m3_d_only,with_amax_only";
    for (int i = 0; alone && i < lesson.configuration_count; ++i)
      csv << ",alone_" << lesson.configurations[i].name;
    csv << ",gpu,date,commit\n";
    std::printf("%-22s %5s %8s %9s %9s %8s %7s %7s %7s %8s %7s %9s %6s %s\n", "M x N x K",
                "check", "err/allow", "fp8 rms", "bf16 rms", "TFLOP/s", "/block", "/tensor",
                "/bf16", "quant ms", "+e4m3 D", "reference", "MHz",
                "configuration, then each alone vs the reference");
    bool all_passed = true;
    for (const GemmProblem& shape : shapes) {
      runner.set_problem(shape, /*seed=*/1, EpilogueOptions{}, *lesson.workload);
      // What lesson 16 loses on these inputs (bf16 all the way), then lesson 18.
      runner.check(bf16_lesson);
      const double bf16_error = runner.relative_rms_error_against_bf16_product();
      const CheckResult check = runner.check(lesson);
      const double fp8_error = runner.relative_rms_error_against_bf16_product();
      all_passed = all_passed && check.passed();
      if (!check.passed()) {
        std::printf("%6lld x %6lld x %6lld FAIL: %s\n", (long long)shape.m, (long long)shape.n,
                    (long long)shape.k, check.against_cublas.summary(shape.n).c_str());
        continue;
      }
      // Lesson 18's workload, for its references and its quantization alone.
      auto* workload = dynamic_cast<BlockScaledE4m3*>(&runner.workload(*lesson.workload));
      if (!workload) throw std::logic_error("the fp8 sweep runs lessons of block-scaled e4m3");
      const ProblemBuffers buffers = runner.buffers();
      const auto against_fp8 = [&](Fp8Scaling scaling) {
        return runner.time_against(
            lesson,
            [&](cudaStream_t stream) { workload->run_fp8_reference(buffers, scaling, stream); },
            timing);
      };
      const bool block = Fp8Reference::block_scaling_takes(shape);
      const PairedTiming against_block = block ? against_fp8(Fp8Scaling::block) : PairedTiming{};
      const PairedTiming against_tensor =
          against_fp8(Fp8Scaling::per_tensor);
      const PairedTiming against_bf16 = runner.time_against_lesson(lesson, bf16_lesson, timing);
      const PairedTiming quantization = runner.time_against(
          lesson, [&](cudaStream_t stream) { workload->quantize_again(buffers, stream); }, timing);
      // The same launch writing D quantized and its amax too (gemm::BlockScaledOutput), against
      // the launch without: their time over its time; and each of the two alone. The amax is
      // zeroed once, before the pairs: each launch raises it to the same max |D|.
      DeviceBuffer<e4m3> quantized_d(size_t(shape.m * shape.n));
      DeviceBuffer<float> quantized_scales(size_t(BlockScaledOperands::k_blocks(shape.n) *
                                                  BlockScaledOperands::scale_rows(shape.m)));
      DeviceBuffer<unsigned int> amax_bits(1);
      GemmArgs quantizing;
      quantizing.problem = shape;
      quantizing.d = runner.d();
      quantizing.fp8 = workload->operands();  // (lesson 18's schedules need no workspace)
      quantizing.fp8_out = {quantized_d.get(), quantized_scales.get(), amax_bits.get()};
      const LaunchPlan plan = plan_launch(lesson, shape);
      CUDA_CHECK(cudaMemset(amax_bits.get(), 0, amax_bits.bytes()));
      const auto time_with = [&](const BlockScaledOutput& out) {
        GemmArgs args = quantizing;
        args.fp8_out = out;
        return runner.time_against(
            lesson, [&](cudaStream_t stream) { launch_planned(lesson, args, plan, stream); },
            timing);
      };
      const PairedTiming with_quantized_d = time_with(quantizing.fp8_out);
      const PairedTiming with_e4m3_d_only =
          time_with({quantized_d.get(), quantized_scales.get(), nullptr});
      const PairedTiming with_amax_only = time_with({nullptr, nullptr, amax_bits.get()});
      std::string each;  // each configuration against the same reference
      for (int i = 0; alone && i < lesson.configuration_count; ++i) {
        const PairedTiming forced = runner.time_against_reference(
            with_configuration(lesson, i), timing);
        each += "," + format_number("%.4f", forced.ratio);
      }
      const double tflops = shape.flops() / (against_tensor.lesson.median_ms * 1e9);
      const double bf16_tflops = shape.flops() / (against_bf16.reference.median_ms * 1e9);
      const auto ratio = [](const PairedTiming& t) {
        return t.timed() ? format_number("%.4f", t.ratio) : std::string();
      };
      const ClockReport& clock = against_tensor.clock;
      const std::string configuration = configuration_name(lesson, plan);
      std::printf("%6lld x %6lld x %6lld %5s %8.3f %9.2e %9.2e %8.1f %7s %7.3f %7.3f %8.4f %7.3f "
                  "%9s %6.0f %s%s\n",
                  (long long)shape.m, (long long)shape.n, (long long)shape.k, "pass",
                  check.against_cublas.max_normalized_error, fp8_error, bf16_error, tflops,
                  block ? ratio(against_block).c_str() : "-", against_tensor.ratio,
                  against_bf16.ratio, quantization.reference.median_ms, with_quantized_d.ratio,
                  block ? "block" : "tensor", clock.available ? clock.sm_mhz_median : 0.0,
                  configuration.c_str(), each.c_str());
      std::fflush(stdout);
      csv << shape.m << "," << shape.n << "," << shape.k << "," << configuration << ",pass,"
          << format_number("%.4g", check.against_cublas.max_normalized_error) << ","
          << format_number("%.4g", fp8_error) << "," << format_number("%.4g", bf16_error)
          << "," << format_number("%.2f", tflops) << "," << (block ? "yes" : "no") << ","
          << ratio(against_block) << "," << ratio(against_tensor) << "," << ratio(against_bf16)
          << "," << format_number("%.2f", bf16_tflops) << ","
          << format_number("%.4f", quantization.reference.median_ms) << ","
          << (clock.available ? format_number("%.0f", clock.sm_mhz_median) : "") << ","
          << (clock.available ? format_number("%.0f", clock.power_w_peak) : "") << ","
          << ratio(with_quantized_d) << "," << ratio(with_e4m3_d_only) << ","
          << ratio(with_amax_only) << each
          << "," << runner.device().name << "," << today_utc() << "," << commit << "\n";
    }
    output.write(csv.str());
    return all_passed ? kExitPass : kExitCheckFailed;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "lesson18 sweep: error: %s\n", error.what());
    return kExitCudaError;
  }
}

}  // namespace gemm
