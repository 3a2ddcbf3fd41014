#include "common/references/reference.hpp"

#include "common/cuda_check.hpp"

namespace gemm {

CublasGemm::CublasGemm() { CUDA_CHECK(cublasCreate(&handle_)); }

CublasGemm::~CublasGemm() {
  if (handle_) cublasDestroy(handle_);
}

void CublasGemm::run_fp32_output(const GemmProblem& problem, const bf16* a, const bf16* b,
                                 float* d, cudaStream_t stream) {
  run(problem, a, b, d, CUDA_R_32F, stream);
}

void CublasGemm::run_bf16_output(const GemmProblem& problem, const bf16* a, const bf16* b,
                                 bf16* d, cudaStream_t stream) {
  run(problem, a, b, d, CUDA_R_16BF, stream);
}

void CublasGemm::run_fp32_inputs(const GemmProblem& problem, const float* a, const float* b,
                                 float* d, cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;
  const int m = int(problem.m), n = int(problem.n), k = int(problem.k);
  CUDA_CHECK(cublasSetStream(handle_, stream));
  // PEDANTIC: fp32 products and sums throughout, never TF32's 10-bit inputs.
  CUDA_CHECK(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N,
                          /*m=*/n, /*n=*/m, /*k=*/k, &alpha,
                          /*A=*/b, CUDA_R_32F, /*lda=*/k,
                          /*B=*/a, CUDA_R_32F, /*ldb=*/k, &beta,
                          /*C=*/d, CUDA_R_32F, /*ldc=*/n,
                          CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT));
}

void CublasGemm::run(const GemmProblem& problem, const bf16* a, const bf16* b, void* d,
                     cudaDataType_t d_type, cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;
  const int m = int(problem.m), n = int(problem.n), k = int(problem.k);
  CUDA_CHECK(cublasSetStream(handle_, stream));
  // cuBLAS's (m, n, k) are our (N, M, K): it computes D^T = B * A^T, column-major (class comment).
  CUDA_CHECK(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N,
                          /*m=*/n, /*n=*/m, /*k=*/k, &alpha,
                          /*A=*/b, CUDA_R_16BF, /*lda=*/k,
                          /*B=*/a, CUDA_R_16BF, /*ldb=*/k, &beta,
                          /*C=*/d, d_type, /*ldc=*/n,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace gemm
