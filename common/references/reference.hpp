#pragma once

#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "common/gemm.hpp"

namespace gemm {

// cuBLAS computing the course's problem, D = A * B^T with A (M x K) and B (N x K) row-major.
//
// cuBLAS is column-major. A row-major M x N matrix is the same bytes as a column-major N x M one,
// so we ask cuBLAS for D^T (N x M) = B * A^T: in its terms the first operand is B's bytes read as
// a K x N column-major matrix and transposed (OP_T), the second is A's bytes as K x M (OP_N).
// Both operands are then "K-major", cuBLAS's fastest "TN" case: the same layout the lessons use.
class CublasGemm {
 public:
  CublasGemm();
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  // fp32 output: the reference every lesson is checked against.
  void run_fp32_output(const GemmProblem& problem, const bf16* a, const bf16* b, float* d,
                       cudaStream_t stream);
  // bf16 output, exactly the lessons' contract: the baseline every lesson is timed against.
  void run_bf16_output(const GemmProblem& problem, const bf16* a, const bf16* b, bf16* d,
                       cudaStream_t stream);
  // fp32 inputs (M x K and N x K, row-major) and output, computed in fp32 throughout: lesson 18's
  // reference, from the values its e4m3 operands and scales stand for.
  void run_fp32_inputs(const GemmProblem& problem, const float* a, const float* b, float* d,
                       cudaStream_t stream);

 private:
  void run(const GemmProblem& problem, const bf16* a, const bf16* b, void* d,
           cudaDataType_t d_type, cudaStream_t stream);
  cublasHandle_t handle_ = nullptr;
};

// The same product in fp64 on the CPU, from bf16 values already converted to float:
// d[i * n + j] = sum over kk of a[i * k + kk] * b[j * k + kk]. For small shapes: O(M*N*K).
std::vector<double> cpu_gemm_fp64(const std::vector<float>& a, const std::vector<float>& b,
                                  const GemmProblem& problem);

}  // namespace gemm
