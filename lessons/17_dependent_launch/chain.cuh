#pragma once
// Lesson 17's problem: the MLP of a transformer layer, two GEMMs where the second reads what the
// first wrote,
//
//   H = gelu(X W1^T + b1)    X: tokens x d_model, W1: d_ff x d_model, b1: d_ff values
//   Y = H W2^T               W2: d_model x d_ff
//
// run four ways: lesson 16's kernels in stream order; lesson 17's as dependent launches; lesson
// 17's captured in a CUDA graph (the programmatic dependency becomes an edge of the graph); and
// cuBLASLt (its GELU_BIAS epilogue, then the plain product). The default model is Llama 3.1 8B's
// (d_model 4096, d_ff 14336).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/cli.hpp"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/epilogue_reference.hpp"
#include "common/gemm.hpp"
#include "common/random.hpp"
#include "common/reference.hpp"
#include "common/runner.hpp"
#include "common/timing.hpp"
#include "common/verify.hpp"
#include "lessons/16_shape_heuristics/kernel.cuh"
#include "lessons/17_dependent_launch/kernel.cuh"

namespace lesson17 {

struct MlpShape {
  int64_t tokens = 512;
  int64_t d_model = 4096;
  int64_t d_ff = 14336;

  gemm::GemmProblem up() const { return {tokens, d_ff, d_model}; }    // H = gelu(X W1^T + b1)
  gemm::GemmProblem down() const { return {tokens, d_model, d_ff}; }  // Y = H W2^T
};

enum class ChainVariant { stream_order, dependent_launch, graph, cublaslt };
inline constexpr ChainVariant kChainVariants[] = {ChainVariant::stream_order,
                                                  ChainVariant::dependent_launch,
                                                  ChainVariant::graph, ChainVariant::cublaslt};

inline const char* variant_name(ChainVariant variant) {
  switch (variant) {
    case ChainVariant::stream_order: return "stream order (lesson 16)";
    case ChainVariant::dependent_launch: return "dependent launch (lesson 17)";
    case ChainVariant::graph: return "CUDA graph of lesson 17";
    case ChainVariant::cublaslt: return "cuBLASLt";
  }
  return "?";
}

// What the check of one run of the chain found: H against cuBLASLt's fused epilogue in fp32, and
// Y against cuBLAS in fp32 on the H the chain computed (so a wrong Y is the second GEMM's fault).
struct ChainCheck {
  gemm::VerifyReport hidden, output;
  bool passed() const { return hidden.passed() && output.passed(); }
};

// The buffers of the chain, its random inputs, and the four ways to run it.
class MlpChain {
 public:
  MlpChain(const MlpShape& shape, uint64_t seed, cudaStream_t stream)
      : shape_(shape), stream_(stream) {
    x_.resize(size_t(shape.tokens * shape.d_model));
    w1_.resize(size_t(shape.d_ff * shape.d_model));
    b1_.resize(size_t(shape.d_ff));
    h_.resize(size_t(shape.tokens * shape.d_ff));
    w2_.resize(size_t(shape.d_model * shape.d_ff));
    y_.resize(size_t(shape.tokens * shape.d_model));
    gemm::fill_uniform(x_.get(), x_.size(), 4 * seed, stream);
    gemm::fill_uniform(w1_.get(), w1_.size(), 4 * seed + 1, stream);
    gemm::fill_uniform(b1_.get(), b1_.size(), 4 * seed + 2, stream);
    gemm::fill_uniform(w2_.get(), w2_.size(), 4 * seed + 3, stream);
    // One Stream-K workspace per GEMM, zeroed once: lessons 16 and 17 leave it zeroed, and both
    // run the same configuration for a problem (lesson 16's choice).
    up_workspace_.resize(std::max(lesson16::workspace_bytes(shape.up()), size_t(1)));
    down_workspace_.resize(std::max(lesson16::workspace_bytes(shape.down()), size_t(1)));
    CUDA_CHECK(cudaMemsetAsync(up_workspace_.get(), 0, up_workspace_.bytes(), stream));
    CUDA_CHECK(cudaMemsetAsync(down_workspace_.get(), 0, down_workspace_.bytes(), stream));
  }
  ~MlpChain() {
    if (graph_) cudaGraphExecDestroy(graph_);
  }
  MlpChain(const MlpChain&) = delete;
  MlpChain& operator=(const MlpChain&) = delete;

  const MlpShape& shape() const { return shape_; }

  // The chain's two launches of a lesson (16: stream order, 17: dependent launches).
  void run_lesson(const gemm::Lesson& lesson, cudaStream_t stream) {
    lesson.launch(up_args(), stream);
    lesson.launch(down_args(), stream);
  }

  // Enqueues one run of the chain on `stream`; does not wait.
  void run(ChainVariant variant, cudaStream_t stream) {
    switch (variant) {
      case ChainVariant::stream_order: return run_lesson(lesson16::kLesson, stream);
      case ChainVariant::dependent_launch: return run_lesson(kLesson, stream);
      case ChainVariant::graph:
        if (!graph_) capture_graph(stream);
        CUDA_CHECK(cudaGraphLaunch(graph_, stream));
        return;
      case ChainVariant::cublaslt: {
        const gemm::GemmArgs up = up_args(), down = down_args();
        cublaslt_.run(up.problem, up.a, up.b, up.epilogue, up.d, CUDA_R_16BF, stream);
        cublaslt_.run(down.problem, down.a, down.b, down.epilogue, down.d, CUDA_R_16BF, stream);
        return;
      }
    }
  }

  // H and Y poisoned, one run of the chain, both checked (see ChainCheck). H starts as poison, so
  // a second GEMM that reads H before the first has written it reads NaN.
  ChainCheck check(ChainVariant variant) {
    gemm::poison(h_.get(), h_.size(), stream_);
    gemm::poison(y_.get(), y_.size(), stream_);
    run(variant, stream_);
    CUDA_CHECK(cudaGetLastError());
    gemm::synchronize_or_timeout(stream_, 120.0);
    ChainCheck result;
    gemm::DeviceBuffer<float> expected(std::max(h_.size(), y_.size()));
    const gemm::GemmArgs up = up_args(), down = down_args();
    cublaslt_.run(up.problem, up.a, up.b, up.epilogue, expected.get(), CUDA_R_32F, stream_);
    result.hidden = gemm::verify_on_device(h_.get(), expected.get(), int64_t(h_.size()), nullptr, 0,
                                           stream_);
    cublas_.run_fp32_output(down.problem, down.a, down.b, expected.get(), stream_);
    result.output = gemm::verify_on_device(y_.get(), expected.get(), int64_t(y_.size()), nullptr, 0,
                                           stream_);
    return result;
  }

 private:
  // The first GEMM, with the fused bias and GELU, and the second, the plain product.
  gemm::GemmArgs up_args() {
    gemm::Epilogue bias_gelu;
    bias_gelu.bias = b1_.get();
    bias_gelu.activation = gemm::Activation::gelu;
    return {shape_.up(), x_.get(), w1_.get(), h_.get(), up_workspace_.get(), bias_gelu};
  }
  gemm::GemmArgs down_args() {
    return {shape_.down(), h_.get(), w2_.get(), y_.get(), down_workspace_.get(), gemm::Epilogue{}};
  }

  // The dependent chain, recorded once into a graph: its kernels keep their programmatic
  // dependency as an edge of the graph. A run of the chain before the capture makes every
  // one-time set-up (shared-memory limits, occupancy queries) happen outside it.
  void capture_graph(cudaStream_t stream) {
    run_lesson(kLesson, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    run_lesson(kLesson, stream);
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    const cudaError_t status = cudaGraphInstantiate(&graph_, graph, 0);
    cudaGraphDestroy(graph);
    CUDA_CHECK(status);
  }

  MlpShape shape_;
  cudaStream_t stream_;
  gemm::DeviceBuffer<gemm::bf16> x_, w1_, b1_, h_, w2_, y_;
  gemm::DeviceBuffer<unsigned char> up_workspace_, down_workspace_;
  gemm::EpilogueReference cublaslt_;
  gemm::CublasGemm cublas_;
  cudaGraphExec_t graph_ = nullptr;
};

// ---- ./lesson17 chain: the four variants at each token count, checked, then timed ----------

// The chain's timings at one token count, each from the paired protocol: the dependent chain
// against stream order, the graph against stream order, the dependent chain against cuBLASLt.
struct ChainTiming {
  int64_t tokens = 0;
  gemm::PairedTiming dependent_vs_stream, graph_vs_stream, dependent_vs_cublaslt;

  double stream_us() const { return 1e3 * dependent_vs_stream.reference.median_ms; }
  double dependent_us() const { return 1e3 * dependent_vs_stream.lesson.median_ms; }
  double graph_us() const { return 1e3 * graph_vs_stream.lesson.median_ms; }
  double cublaslt_us() const { return 1e3 * dependent_vs_cublaslt.reference.median_ms; }
  // Time over time, as the median of the pairs (each PairedTiming's ratio is the inverse).
  double dependent_over_stream() const { return 1.0 / dependent_vs_stream.ratio; }
  double graph_over_stream() const { return 1.0 / graph_vs_stream.ratio; }
  double dependent_over_cublaslt() const { return 1.0 / dependent_vs_cublaslt.ratio; }
};

inline ChainTiming time_chain(MlpChain& chain, gemm::PairedTimer& timer,
                              const gemm::TimingOptions& options, cudaStream_t stream) {
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

inline const char* kChainUsage =
    "usage: lesson17 chain [--tokens 64,128,...] [--d-model N] [--d-ff N] [--iters PAIRS]\n"
    "                      [--seed S] [--csv FILE] [--commit SHA]\n"
    "  The MLP chain H = gelu(X W1^T + b1), Y = H W2^T at each token count: checked four ways\n"
    "  (stream order, dependent launch, CUDA graph, cuBLASLt), then timed in pairs.\n";

// `lesson17 chain ...` (argv[1] is "chain"). Returns the exit code (gemm::ExitCode).
inline int run_chain_command(int argc, char** argv) {
  MlpShape model;
  std::vector<int64_t> token_counts = {64, 128, 256, 512, 1024, 2048, 4096};
  gemm::TimingOptions options;
  uint64_t seed = 1;
  std::string csv_path, commit = "unknown";
  try {
    for (int i = 2; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--help") {
        std::printf("%s", kChainUsage);
        return gemm::kExitPass;
      }
      if (i + 1 >= argc) throw gemm::UsageError(flag + " needs a value");
      const std::string value = argv[++i];
      if (flag == "--tokens") token_counts = gemm::parse_integer_list(flag, value, 1, 1 << 20);
      else if (flag == "--d-model") model.d_model = gemm::parse_integer(flag, value, 8, 1 << 16);
      else if (flag == "--d-ff") model.d_ff = gemm::parse_integer(flag, value, 8, 1 << 17);
      else if (flag == "--iters") options.pairs = int(gemm::parse_integer(flag, value, 1, 10000));
      else if (flag == "--seed") seed = uint64_t(gemm::parse_integer(flag, value, 0, INT64_MAX));
      else if (flag == "--csv") csv_path = value;
      else if (flag == "--commit") commit = value;
      else throw gemm::UsageError("unknown option '" + flag + "'");
    }
    if (token_counts.empty()) throw gemm::UsageError("--tokens needs at least one count");
    if (model.d_model % 8 != 0 || model.d_ff % 8 != 0)
      throw gemm::UsageError("--d-model and --d-ff must be multiples of 8 (the shape contract)");
  } catch (const gemm::UsageError& error) {
    std::fprintf(stderr, "lesson17: error: %s (lesson17 chain --help)\n", error.what());
    return gemm::kExitBadUsage;
  }
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::fprintf(stderr, "lesson17: error: no CUDA GPU found\n");
    return gemm::kExitNoGpu;
  }
  try {
    gemm::LessonRunner runner(0);
    if (const auto reason = gemm::unsupported_reason(kLesson, runner.device())) {
      std::fprintf(stderr, "lesson17: error: %s\n", reason->c_str());
      return gemm::kExitUnsupportedGpu;
    }
    gemm::PairedTimer timer(runner.device().l2_bytes, runner.device().ordinal);
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
      MlpChain chain(shape, seed, runner.stream());
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
      const gemm::ClockReport& clock = t.dependent_vs_stream.clock;
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
          << "," << gemm::today_utc() << "," << commit << "\n";
    }
    std::printf("times: medians of the pairs; ratios: medians of the per-pair ratios "
                "(below 1: the first is faster)\n");
    if (!csv_path.empty()) {
      std::ofstream file(csv_path);
      file << csv.str();
      if (!file) {
        std::fprintf(stderr, "lesson17: error: cannot write %s\n", csv_path.c_str());
        return gemm::kExitBadUsage;
      }
    }
    return all_passed ? gemm::kExitPass : gemm::kExitCheckFailed;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "lesson17: error: %s\n", error.what());
    return gemm::kExitCudaError;
  }
}

}  // namespace lesson17
