#include "common/mlp/mlp_chain.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/harness/cli.hpp"
#include "common/harness/random.hpp"
#include "common/harness/runner.hpp"

namespace gemm {

const char* variant_name(ChainVariant variant) {
  switch (variant) {
    case ChainVariant::stream_order: return "stream order (lesson 16)";
    case ChainVariant::dependent_launch: return "dependent launch (lesson 17)";
    case ChainVariant::graph: return "CUDA graph of lesson 17";
    case ChainVariant::cublaslt: return "cuBLASLt";
  }
  return "?";
}

MlpChain::MlpChain(const MlpShape& shape, uint64_t seed, cudaStream_t stream,
                   const Lesson& stream_order, const Lesson& dependent)
    : shape_(shape),
      stream_(stream),
      stream_order_{&stream_order, plan_launch(stream_order, shape.up()),
                    plan_launch(stream_order, shape.down())},
      dependent_{&dependent, plan_launch(dependent, shape.up()), plan_launch(dependent, shape.down())} {
  x_.resize(size_t(shape.tokens * shape.d_model));
  w1_.resize(size_t(shape.d_ff * shape.d_model));
  b1_.resize(size_t(shape.d_ff));
  h_.resize(size_t(shape.tokens * shape.d_ff));
  w2_.resize(size_t(shape.d_model * shape.d_ff));
  y_.resize(size_t(shape.tokens * shape.d_model));
  fill_uniform(x_.get(), x_.size(), 4 * seed, stream);
  fill_uniform(w1_.get(), w1_.size(), 4 * seed + 1, stream);
  fill_uniform(b1_.get(), b1_.size(), 4 * seed + 2, stream);
  fill_uniform(w2_.get(), w2_.size(), 4 * seed + 3, stream);
  // One Stream-K workspace per GEMM, large enough for both lessons' plans, zeroed once: lessons
  // 16 and 17 leave it zeroed.
  up_workspace_.resize(std::max({stream_order_.up.workspace_bytes, dependent_.up.workspace_bytes,
                                 size_t(1)}));
  down_workspace_.resize(std::max({stream_order_.down.workspace_bytes,
                                   dependent_.down.workspace_bytes, size_t(1)}));
  CUDA_CHECK(cudaMemsetAsync(up_workspace_.get(), 0, up_workspace_.bytes(), stream));
  CUDA_CHECK(cudaMemsetAsync(down_workspace_.get(), 0, down_workspace_.bytes(), stream));
}

MlpChain::~MlpChain() {
  if (graph_) cudaGraphExecDestroy(graph_);
}

void MlpChain::run_lesson(const Plans& plans, cudaStream_t stream) {
  launch_planned(*plans.lesson, up_args(), plans.up, stream);
  launch_planned(*plans.lesson, down_args(), plans.down, stream);
}

void MlpChain::run(ChainVariant variant, cudaStream_t stream) {
  switch (variant) {
    case ChainVariant::stream_order: return run_lesson(stream_order_, stream);
    case ChainVariant::dependent_launch: return run_lesson(dependent_, stream);
    case ChainVariant::graph:
      if (!graph_) capture_graph(stream);
      CUDA_CHECK(cudaGraphLaunch(graph_, stream));
      return;
    case ChainVariant::cublaslt: {
      const GemmArgs up = up_args(), down = down_args();
      cublaslt_.run(up.problem, up.a, up.b, up.epilogue, up.d, CUDA_R_16BF, stream);
      cublaslt_.run(down.problem, down.a, down.b, down.epilogue, down.d, CUDA_R_16BF, stream);
      return;
    }
  }
}

ChainCheck MlpChain::check(ChainVariant variant) {
  poison(h_.get(), h_.size(), stream_);
  poison(y_.get(), y_.size(), stream_);
  run(variant, stream_);
  CUDA_CHECK(cudaGetLastError());
  synchronize_or_timeout(stream_, 120.0);
  ChainCheck result;
  DeviceBuffer<float> expected(std::max(h_.size(), y_.size()));
  const GemmArgs up = up_args(), down = down_args();
  cublaslt_.run(up.problem, up.a, up.b, up.epilogue, expected.get(), CUDA_R_32F, stream_);
  result.hidden = verify_on_device(h_.get(), expected.get(), int64_t(h_.size()), nullptr, 0, stream_);
  cublas_.run_fp32_output(down.problem, down.a, down.b, expected.get(), stream_);
  result.output = verify_on_device(y_.get(), expected.get(), int64_t(y_.size()), nullptr, 0, stream_);
  return result;
}

GemmArgs MlpChain::up_args() {
  Epilogue bias_gelu;
  bias_gelu.bias = b1_.get();
  bias_gelu.activation = Activation::gelu;
  return {shape_.up(), x_.get(), w1_.get(), h_.get(), up_workspace_.get(), bias_gelu,
          BlockScaledOperands{}, BlockScaledOutput{}};
}

GemmArgs MlpChain::down_args() {
  return {shape_.down(), h_.get(), w2_.get(), y_.get(), down_workspace_.get(), Epilogue{},
          BlockScaledOperands{}, BlockScaledOutput{}};
}

void MlpChain::capture_graph(cudaStream_t stream) {
  run_lesson(dependent_, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  run_lesson(dependent_, stream);
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  const cudaError_t status = cudaGraphInstantiate(&graph_, graph, 0);
  cudaGraphDestroy(graph);
  CUDA_CHECK(status);
}

ChainTiming time_chain(MlpChain& chain, PairedTimer& timer, const TimingOptions& options,
                       cudaStream_t stream) {
  const auto variant = [&chain](ChainVariant v) {
    return [&chain, v](cudaStream_t s) { chain.run(v, s); };
  };
  ChainTiming timing;
  timing.tokens = chain.shape().tokens;
  timing.dependent_vs_stream = timer.time(variant(ChainVariant::dependent_launch),
                                          variant(ChainVariant::stream_order), options, stream);
  timing.graph_vs_stream = timer.time(variant(ChainVariant::graph),
                                      variant(ChainVariant::stream_order), options, stream);
  timing.dependent_vs_cublaslt = timer.time(variant(ChainVariant::dependent_launch),
                                            variant(ChainVariant::cublaslt), options, stream);
  return timing;
}

namespace {
const char* kChainUsage =
    "usage: lesson17 chain [--tokens 64,128,...] [--d-model N] [--d-ff N] [--iters PAIRS]\n"
    "                      [--seed S] [--csv FILE] [--commit SHA]\n"
    "  The MLP chain H = gelu(X W1^T + b1), Y = H W2^T at each token count: checked four ways\n"
    "  (stream order, dependent launch, CUDA graph, cuBLASLt), then timed in pairs.\n";

}  // namespace

int run_chain_command(const Lesson& stream_order, const Lesson& dependent, int argc, char** argv) {
  MlpShape model;
  std::vector<int64_t> token_counts = {64, 128, 256, 512, 1024, 2048, 4096};
  TimingOptions options;
  uint64_t seed = 1;
  std::string csv_path, commit = "unknown";
  try {
    for (int i = 2; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--help") {
        std::printf("%s", kChainUsage);
        return kExitPass;
      }
      if (i + 1 >= argc) throw UsageError(flag + " needs a value");
      const std::string value = argv[++i];
      if (flag == "--tokens") token_counts = parse_integer_list(flag, value, 1, 1 << 20);
      else if (flag == "--d-model") model.d_model = parse_integer(flag, value, 8, 1 << 16);
      else if (flag == "--d-ff") model.d_ff = parse_integer(flag, value, 8, 1 << 17);
      else if (flag == "--iters") options.pairs = int(parse_integer(flag, value, 1, 10000));
      else if (flag == "--seed") seed = uint64_t(parse_integer(flag, value, 0, INT64_MAX));
      else if (flag == "--csv") csv_path = value;
      else if (flag == "--commit") commit = value;
      else throw UsageError("unknown option '" + flag + "'");
    }
    if (token_counts.empty()) throw UsageError("--tokens needs at least one count");
    if (model.d_model % 8 != 0 || model.d_ff % 8 != 0)
      throw UsageError("--d-model and --d-ff must be multiples of 8 (the shape contract)");
  } catch (const UsageError& error) {
    std::fprintf(stderr, "lesson17: error: %s (lesson17 chain --help)\n", error.what());
    return kExitBadUsage;
  }
  if (const auto missing = missing_gpu()) {
    std::fprintf(stderr, "lesson17: error: %s\n", missing->c_str());
    return kExitNoGpu;
  }
  try {
    LessonRunner runner(0);
    if (const auto reason = unsupported_reason(dependent, runner.device())) {
      std::fprintf(stderr, "lesson17: error: %s\n", reason->c_str());
      return kExitUnsupportedGpu;
    }
    PairedTimer timer(runner.device().l2_bytes, runner.device().ordinal);
    std::printf("MLP chain: H = gelu(X W1^T + b1), Y = H W2^T, d_model %lld, d_ff %lld, on %s\n",
                (long long)model.d_model, (long long)model.d_ff, runner.device().name.c_str());
    std::printf("%7s %11s %11s %11s %11s %10s %10s %12s  %s\n", "tokens", "stream us",
                "dependent", "graph", "cuBLASLt", "dep/strm", "graph/strm", "dep/cuBLASLt",
                "SM clock (dependent vs stream)");
    std::ostringstream csv;
    csv << "tokens,d_model,d_ff,stream_us,dependent_us,graph_us,cublaslt_us,"
           "dependent_over_stream,graph_over_stream,dependent_over_cublaslt,pairs,sm_mhz_median,"
           "date,commit\n";
    bool all_passed = true;
    for (const int64_t tokens : token_counts) {
      MlpShape shape = model;
      shape.tokens = tokens;
      MlpChain chain(shape, seed, runner.stream(), stream_order, dependent);
      bool passed = true;
      for (const ChainVariant variant : kChainVariants) {
        const ChainCheck check = chain.check(variant);
        if (!check.passed()) {
          std::printf("%7lld  FAILED: %s: H %lld mismatches (max error %.3g), Y %lld mismatches "
                      "(max error %.3g)\n",
                      (long long)tokens, variant_name(variant), (long long)check.hidden.mismatches,
                      check.hidden.max_normalized_error, (long long)check.output.mismatches,
                      check.output.max_normalized_error);
          passed = false;
        }
      }
      all_passed = all_passed && passed;
      if (!passed) continue;
      const ChainTiming t = time_chain(chain, timer, options, runner.stream());
      const ClockReport& clock = t.dependent_vs_stream.clock;
      std::printf("%7lld %11.1f %11.1f %11.1f %11.1f %10.3f %10.3f %12.3f  %s\n",
                  (long long)tokens, t.stream_us(), t.dependent_us(), t.graph_us(),
                  t.cublaslt_us(), t.dependent_over_stream(), t.graph_over_stream(),
                  t.dependent_over_cublaslt(), clock.summary().c_str());
      std::fflush(stdout);
      csv << tokens << "," << shape.d_model << "," << shape.d_ff << "," << t.stream_us() << ","
          << t.dependent_us() << "," << t.graph_us() << "," << t.cublaslt_us() << ","
          << t.dependent_over_stream() << "," << t.graph_over_stream() << ","
          << t.dependent_over_cublaslt() << "," << t.dependent_vs_stream.pairs << ","
          << (clock.available ? std::to_string(int(clock.sm_mhz_median)) : std::string("n/a"))
          << "," << today_utc() << "," << commit << "\n";
    }
    std::printf("times: medians of the pairs; ratios: medians of the per-pair ratios "
                "(below 1: the first is faster)\n");
    if (!csv_path.empty()) {
      std::ofstream file(csv_path);
      file << csv.str();
      if (!file) {
        std::fprintf(stderr, "lesson17: error: cannot write %s\n", csv_path.c_str());
        return kExitBadUsage;
      }
    }
    return all_passed ? kExitPass : kExitCheckFailed;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "lesson17: error: %s\n", error.what());
    return kExitCudaError;
  }
}

}  // namespace gemm
