// The timeline of lesson 17's MLP chain: when each kernel of the chain started and ended on the
// GPU, read from CUPTI's activity records (the start of a kernel is the start of its first block,
// its end that of its last). In stream order the second GEMM starts after the first has ended; as
// a dependent launch it starts while the first is still running its last blocks, and waits on the
// device for it.
//
//   chain_timeline [--tokens 128,512] [--runs 3]
//
// Prints, for each token count and way of running the chain, each run's kernels with their start
// and end in microseconds from the run's first start, and the gap between the first GEMM's end and
// the second's start (negative: they overlap).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/harness/activity_timeline.hpp"
#include "common/harness/cli.hpp"
#include "common/harness/runner.hpp"
#include "common/mlp/mlp_chain.hpp"
#include "lessons/registry.hpp"

namespace {

// The GEMM kernels of a timeline (cuBLAS's or the flush's are left out), in start order.
std::vector<gemm::ActivitySpan> gemms_of(const std::vector<gemm::ActivitySpan>& spans) {
  std::vector<gemm::ActivitySpan> gemms;
  for (const gemm::ActivitySpan& span : spans)
    if (!span.on_copy_engine && span.what.find("gemm_kernel") != std::string::npos)
      gemms.push_back(span);
  return gemms;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> token_counts = {128, 512};
  int runs = 3;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (i + 1 >= argc) throw gemm::UsageError(flag + " needs a value");
      const std::string value = argv[++i];
      if (flag == "--tokens") token_counts = gemm::parse_integer_list(flag, value, 1, 1 << 20);
      else if (flag == "--runs") runs = int(gemm::parse_integer(flag, value, 1, 100));
      else throw gemm::UsageError("unknown option '" + flag + "'");
    }
  } catch (const gemm::UsageError& error) {
    std::fprintf(stderr, "chain_timeline: error: %s\nusage: chain_timeline [--tokens 128,512] "
                         "[--runs 3]\n", error.what());
    return gemm::kExitBadUsage;
  }
  if (const auto missing = gemm::missing_gpu()) {
    std::fprintf(stderr, "chain_timeline: error: %s\n", missing->c_str());
    return gemm::kExitNoGpu;
  }
  try {
    gemm::LessonRunner runner(0);
    if (const auto reason = gemm::unsupported_reason(gemm::lessons::lesson17(), runner.device())) {
      std::fprintf(stderr, "chain_timeline: error: %s\n", reason->c_str());
      return gemm::kExitUnsupportedGpu;
    }
    for (const int64_t tokens : token_counts) {
      gemm::MlpShape shape;
      shape.tokens = tokens;
      gemm::MlpChain chain(shape, /*seed=*/1, runner.stream(), gemm::lessons::lesson16(),
                           gemm::lessons::lesson17());
      for (const gemm::ChainVariant variant :
           {gemm::ChainVariant::stream_order, gemm::ChainVariant::dependent_launch,
            gemm::ChainVariant::graph}) {
        // Untraced first: one-time set-up, the graph's capture, the clock.
        for (int i = 0; i < 5; ++i) chain.run(variant, runner.stream());
        CUDA_CHECK(cudaStreamSynchronize(runner.stream()));
        std::vector<gemm::ActivitySpan> gemms;
        {
          gemm::ActivityTimeline timeline;
          for (int i = 0; i < runs; ++i) {
            chain.run(variant, runner.stream());
            CUDA_CHECK(cudaStreamSynchronize(runner.stream()));  // runs apart: one chain at a time
          }
          gemms = gemms_of(timeline.spans());
        }
        std::printf("%lld tokens, %s:\n", (long long)tokens, gemm::variant_name(variant));
        for (size_t i = 0; i + 1 < gemms.size(); i += 2) {
          const gemm::ActivitySpan &up = gemms[i], &down = gemms[i + 1];
          const double origin = double(up.start_ns);
          std::printf("  run %zu: GEMM 1 %8.1f .. %8.1f us   GEMM 2 %8.1f .. %8.1f us   "
                      "GEMM 2 starts %+7.1f us after GEMM 1 ends\n",
                      i / 2 + 1, 0.0, (up.end_ns - origin) / 1e3, (down.start_ns - origin) / 1e3,
                      (down.end_ns - origin) / 1e3,
                      (double(down.start_ns) - double(up.end_ns)) / 1e3);
        }
      }
    }
    return gemm::kExitPass;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "chain_timeline: error: %s\n", error.what());
    return gemm::kExitCudaError;
  }
}
