#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "common/device_buffer.hpp"
#include "common/gemm.hpp"
#include "common/references/epilogue_cpu.hpp"

namespace gemm {

// The library computing lesson 15's problem, the reference it is checked against and the
// baseline it is timed against:
//
//   D = act(alpha * (A * B^T) + beta * C + bias)
//
// For act = none, relu or gelu, cuBLASLt does it all in one call: its epilogues apply bias and
// activation to the accumulators before they are stored, and beta * C comes in through its C
// matrix. cuBLASLt has no SiLU epilogue, so for SiLU it computes alpha * (A * B^T) in fp32 and
// one elementwise kernel adds beta * C and the bias, applies SiLU and writes D: "cuBLAS +
// elementwise", the unfused way a framework would do it, which lesson 15 wants to beat.
//
// cuBLASLt is column-major, like cuBLAS: the row-major M x N D is the column-major N x M D^T,
// so it computes D^T = B * A^T (see CublasGemm in reference.hpp). In that view D^T has N rows
// and cuBLASLt's bias vector holds one value per row of its output: N values, one per column of
// our D, which is exactly our bias.
class EpilogueReference {
 public:
  EpilogueReference();
  ~EpilogueReference();
  EpilogueReference(const EpilogueReference&) = delete;
  EpilogueReference& operator=(const EpilogueReference&) = delete;

  // Computes the epilogue into d (M x N, row-major) on `stream`; does not wait.
  //   d_type CUDA_R_32F:  fp32 output, the reference lesson 15 is checked against.
  //   d_type CUDA_R_16BF: bf16 output, exactly the lesson's contract: the timing baseline.
  // a, b and the epilogue's c and bias are device pointers; c must be set when beta != 0.
  // The first call for a shape and kind of epilogue asks cuBLASLt for an algorithm; later calls
  // reuse it, so that a timed call is one cublasLtMatmul (plus the elementwise kernel for SiLU).
  // Throws CudaError if cuBLASLt has no algorithm for the problem.
  void run(const GemmProblem& problem, const bf16* a, const bf16* b, const Epilogue& epilogue,
           void* d, cudaDataType_t d_type, cudaStream_t stream);

  // Whether cuBLASLt has a fused epilogue for the activation (none, relu, gelu: yes; silu: no).
  static bool fused(Activation activation);
  // One line naming what computes the epilogue, e.g. "cuBLASLt GELU_BIAS epilogue" or
  // "cuBLASLt + elementwise SiLU".
  static std::string describe(const Epilogue& epilogue);

 private:
  // What cuBLASLt's choice of algorithm depends on. Besides the shape, the epilogue and the output
  // type, that is how far each pointer is aligned: the heuristic picks kernels that may assume
  // it (up to 256 bytes), so a pointer aligned less would need another algorithm.
  struct PlanKey {
    int64_t m, n, k;
    cublasLtEpilogue_t epilogue;
    cudaDataType_t d_type;
    uint32_t a_alignment, b_alignment, c_alignment, d_alignment, bias_alignment;
    bool operator<(const PlanKey& other) const;
  };
  // The descriptors, layouts and algorithm of one PlanKey (defined in the .cu file).
  struct Plan;

  // D = epilogue(alpha * A * B^T + beta * C + bias) in one cublasLtMatmul, C and bias (may be
  // nullptr) already in the types cuBLASLt wants for d_type.
  void matmul(const GemmProblem& problem, const bf16* a, const bf16* b, float alpha, float beta,
              const void* c, const void* bias, cublasLtEpilogue_t epilogue, void* d,
              cudaDataType_t d_type, cudaStream_t stream);
  Plan& plan_for(const PlanKey& key, const void* bias);

  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer<unsigned char> workspace_;
  std::map<PlanKey, std::unique_ptr<Plan>> plans_;
  // fp32 output: cuBLASLt wants C and the bias in the output type. These hold fp32 copies,
  // converted from bf16 on every such call (exact: every bf16 value is a float).
  DeviceBuffer<float> c_fp32_;
  DeviceBuffer<float> bias_fp32_;
  // SiLU: the fp32 product alpha * A * B^T that the elementwise kernel finishes.
  DeviceBuffer<float> product_fp32_;
};

}  // namespace gemm
