#pragma once
// The MLP of a transformer layer, two GEMMs where the second reads what the first wrote (lesson
// 17's problem, and lesson 19's per rank):
//
//   H = gelu(X W1^T + b1)    X: tokens x d_model, W1: d_ff x d_model, b1: d_ff values
//   Y = H W2^T               W2: d_model x d_ff
//
// run four ways: a lesson's kernels in stream order; another lesson's as dependent launches (its
// kernel waits for the one ahead on the device); that lesson's captured in a CUDA graph (the
// programmatic dependency becomes an edge of the graph); and cuBLASLt (its GELU_BIAS epilogue,
// then the plain product). The default model is Llama 3.1 8B's (d_model 4096, d_ff 14336).

#include <cstdint>

#include <cuda_runtime_api.h>

#include "common/device_buffer.hpp"
#include "common/gemm.hpp"
#include "common/harness/timing.hpp"
#include "common/harness/verify.hpp"
#include "common/lesson.hpp"
#include "common/references/epilogue_reference.hpp"
#include "common/references/reference.hpp"

namespace gemm {

struct MlpShape {
  int64_t tokens = 512;
  int64_t d_model = 4096;
  int64_t d_ff = 14336;

  GemmProblem up() const { return {tokens, d_ff, d_model}; }    // H = gelu(X W1^T + b1)
  GemmProblem down() const { return {tokens, d_model, d_ff}; }  // Y = H W2^T
};

enum class ChainVariant { stream_order, dependent_launch, graph, cublaslt };
inline constexpr ChainVariant kChainVariants[] = {ChainVariant::stream_order,
                                                  ChainVariant::dependent_launch,
                                                  ChainVariant::graph, ChainVariant::cublaslt};

const char* variant_name(ChainVariant variant);

// What the check of one run of the chain found: H against cuBLASLt's fused epilogue in fp32, and
// Y against cuBLAS in fp32 on the H the chain computed (so a wrong Y is the second GEMM's fault).
struct ChainCheck {
  VerifyReport hidden, output;
  bool passed() const { return hidden.passed() && output.passed(); }
};

// The buffers of the chain, its random inputs, and the four ways to run it. `stream_order` runs
// in stream order (lesson 16), `dependent` as dependent launches (lesson 17); each GEMM's plan is
// made once, here.
class MlpChain {
 public:
  MlpChain(const MlpShape& shape, uint64_t seed, cudaStream_t stream, const Lesson& stream_order,
           const Lesson& dependent);
  ~MlpChain();
  MlpChain(const MlpChain&) = delete;
  MlpChain& operator=(const MlpChain&) = delete;

  const MlpShape& shape() const { return shape_; }

  // Enqueues one run of the chain on `stream`; does not wait.
  void run(ChainVariant variant, cudaStream_t stream);

  // H and Y poisoned, one run of the chain, both checked (see ChainCheck). H starts as poison, so
  // a second GEMM that reads H before the first has written it reads NaN.
  ChainCheck check(ChainVariant variant);

 private:
  // One lesson's plans of the two GEMMs.
  struct Plans {
    const Lesson* lesson;
    LaunchPlan up, down;
  };
  // The chain's two launches of a lesson, on its plans.
  void run_lesson(const Plans& plans, cudaStream_t stream);
  // The first GEMM, with the fused bias and GELU, and the second, the plain product.
  GemmArgs up_args();
  GemmArgs down_args();
  // The dependent chain, recorded once into a graph: its kernels keep their programmatic
  // dependency as an edge of the graph. A run of the chain before the capture makes every
  // one-time set-up (shared-memory limits, occupancy queries) happen outside it.
  void capture_graph(cudaStream_t stream);

  MlpShape shape_;
  cudaStream_t stream_;
  Plans stream_order_, dependent_;
  DeviceBuffer<bf16> x_, w1_, b1_, h_, w2_, y_;
  DeviceBuffer<unsigned char> up_workspace_, down_workspace_;
  EpilogueReference cublaslt_;
  CublasGemm cublas_;
  cudaGraphExec_t graph_ = nullptr;
};

// The chain's timings at one token count, each from the paired protocol: the dependent chain
// against stream order, the graph against stream order, the dependent chain against cuBLASLt.
struct ChainTiming {
  int64_t tokens = 0;
  PairedTiming dependent_vs_stream, graph_vs_stream, dependent_vs_cublaslt;

  double stream_us() const { return 1e3 * dependent_vs_stream.reference.median_ms; }
  double dependent_us() const { return 1e3 * dependent_vs_stream.lesson.median_ms; }
  double graph_us() const { return 1e3 * graph_vs_stream.lesson.median_ms; }
  double cublaslt_us() const { return 1e3 * dependent_vs_cublaslt.reference.median_ms; }
  // Time over time, as the median of the pairs (each PairedTiming's ratio is the inverse).
  double dependent_over_stream() const { return 1.0 / dependent_vs_stream.ratio; }
  double graph_over_stream() const { return 1.0 / graph_vs_stream.ratio; }
  double dependent_over_cublaslt() const { return 1.0 / dependent_vs_cublaslt.ratio; }
};

ChainTiming time_chain(MlpChain& chain, PairedTimer& timer, const TimingOptions& options,
                       cudaStream_t stream);

// `lesson17 chain ...` (argv[1] is "chain"): the chain at each token count, checked four ways,
// then timed in pairs. Returns the exit code (gemm::ExitCode).
int run_chain_command(const Lesson& stream_order, const Lesson& dependent, int argc, char** argv);

}  // namespace gemm
