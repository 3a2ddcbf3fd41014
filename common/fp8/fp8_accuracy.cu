#include "common/fp8/fp8_accuracy.hpp"

#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/fp8/fp8_block_scaling.hpp"
#include "common/harness/cli.hpp"
#include "common/harness/command.hpp"
#include "common/harness/runner.hpp"
#include "common/harness/text_format.hpp"
#include "common/harness/verify.hpp"
#include "common/references/reference.hpp"
#include "common/workloads/block_scaled_e4m3.hpp"

namespace gemm {

int run_fp8_accuracy_command(const Lesson& lesson, int argc, char** argv) {
  int64_t m = 256, n = 256;
  std::vector<int64_t> ks = {256, 1024, 4096, 16384, 65536};
  CommandOutput output;
  const int read = read_command_line(
      "lesson18 accuracy",
      "lesson18 accuracy [--m M] [--n N] [--ks 256,1024,4096,...] [--csv FILE] [--commit SHA]",
      argc, argv, /*first=*/2, output,
      [&](const std::string& flag, const std::string& value) {
        if (flag == "--m")
          m = parse_integer(flag, value, 1, int64_t(1) << 30);
        else if (flag == "--n")
          n = parse_integer(flag, value, 1, int64_t(1) << 30);
        else if (flag == "--ks")
          ks = parse_integer_list(flag, value, 1, int64_t(1) << 30);
        else
          return false;
        return true;
      },
      [&] {
        for (const int64_t k : ks)
          if (const auto violation = block_scaled_contract_violation({m, n, k}))
            throw std::invalid_argument(*violation);
      });
  if (read != kExitPass) return read;
  const std::string& commit = output.commit;
  try {
    int refused = kExitPass;
    const auto started = command_runner("lesson18 accuracy", lesson, &refused);
    if (!started) return refused;
    LessonRunner& runner = *started;
    const cudaStream_t stream = runner.stream();
    CublasGemm cublas;
    std::ostringstream csv;
    csv << "m,n,k,check,lesson18,cublaslt_block_scaled,cublaslt_per_tensor,"
           "cublaslt_per_tensor_fast_accumulation,gpu,date,commit\n";
    std::printf("relative rms error of D against the product of the values its operands stand "
                "for (fp32), M = %lld, N = %lld\n", (long long)m, (long long)n);
    std::printf("%8s %6s %10s %10s %12s %14s\n", "K", "check", "lesson 18", "cuBLASLt",
                "cuBLASLt", "cuBLASLt");
    std::printf("%8s %6s %10s %10s %12s %14s\n", "", "", "block", "block", "per-tensor",
                "per-tensor fast");
    bool all_passed = true;
    for (const int64_t k : ks) {
      const GemmProblem shape{m, n, k};
      runner.set_problem(shape, /*seed=*/1, EpilogueOptions{}, *lesson.workload);
      auto* workload = dynamic_cast<BlockScaledE4m3*>(&runner.workload(*lesson.workload));
      if (!workload) throw std::logic_error("the accuracy run needs lesson 18's workload");
      const ProblemBuffers buffers = runner.buffers();
      // Lesson 18 into D, checked; then the products of the values the block-scaled and the
      // per-tensor operands stand for.
      const CheckResult check = runner.check(lesson);
      all_passed = all_passed && check.passed();
      DeviceBuffer<float> a(size_t(m * k)), b(size_t(n * k));
      DeviceBuffer<float> block_product(size_t(m * n)), tensor_product(size_t(m * n));
      dequantize(shape, workload->operands(), a.get(), b.get(), stream);
      cublas.run_fp32_inputs(shape, a.get(), b.get(), block_product.get(), stream);
      dequantize_per_tensor(shape, workload->inputs(), a.get(), b.get(), stream);
      cublas.run_fp32_inputs(shape, a.get(), b.get(), tensor_product.get(), stream);
      const double lesson_error = relative_rms_error(runner.d(), block_product.get(), m * n, stream);
      const auto error_of = [&](Fp8Scaling scaling, const float* product) {
        workload->run_fp8_reference(buffers, scaling, stream);
        return relative_rms_error(runner.d(), product, m * n, stream);
      };
      const bool block = Fp8Reference::block_scaling_takes(shape);
      const double block_error = block ? error_of(Fp8Scaling::block, block_product.get()) : 0;
      const double tensor_error = error_of(Fp8Scaling::per_tensor, tensor_product.get());
      const double fast_error =
          error_of(Fp8Scaling::per_tensor_fast_accumulation, tensor_product.get());
      // (The products are freed when this iteration ends: the stream must be done with them.)
      CUDA_CHECK(cudaStreamSynchronize(stream));

      const std::string block_text = block ? format_number("%.3e", block_error) : "-";
      std::printf("%8lld %6s %10.3e %10s %12.3e %14.3e\n", (long long)k,
                  check.passed() ? "pass" : "FAIL", lesson_error, block_text.c_str(), tensor_error,
                  fast_error);
      std::fflush(stdout);
      csv << m << "," << n << "," << k << "," << (check.passed() ? "pass" : "fail") << ","
          << format_number("%.4e", lesson_error) << ","
          << (block ? format_number("%.4e", block_error) : "") << ","
          << format_number("%.4e", tensor_error) << "," << format_number("%.4e", fast_error)
          << "," << runner.device().name << "," << today_utc() << "," << commit << "\n";
    }
    output.write(csv.str());
    return all_passed ? kExitPass : kExitCheckFailed;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "lesson18 accuracy: error: %s\n", error.what());
    return kExitCudaError;
  }
}

}  // namespace gemm
