#include "common/references/fp8_reference.hpp"

#include "common/cuda_check.hpp"

namespace gemm {
namespace {

template <class T>
void set_attribute(cublasLtMatmulDesc_t operation, cublasLtMatmulDescAttributes_t attribute,
                   const T& value) {
  CUDA_CHECK(cublasLtMatmulDescSetAttribute(operation, attribute, &value, sizeof(value)));
}

}  // namespace

// cuBLASLt computes D^T = B * A^T in its column-major terms: its A is our B (K x N, transposed),
// its B our A (K x M), and one layout serves as its C and D (N x M, leading dimension N).
struct Fp8Reference::Plan {
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t b_layout = nullptr, a_layout = nullptr, d_layout = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulAlgo_t algo{};

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (preference) cublasLtMatmulPreferenceDestroy(preference);
    if (d_layout) cublasLtMatrixLayoutDestroy(d_layout);
    if (a_layout) cublasLtMatrixLayoutDestroy(a_layout);
    if (b_layout) cublasLtMatrixLayoutDestroy(b_layout);
    if (operation) cublasLtMatmulDescDestroy(operation);
  }
};

Fp8Reference::Fp8Reference() : workspace_(kWorkspaceBytes) { CUDA_CHECK(cublasLtCreate(&handle_)); }

Fp8Reference::~Fp8Reference() {
  plans_.clear();  // their descriptors first, then the library context they were made for
  if (handle_) cublasLtDestroy(handle_);
}

std::string Fp8Reference::describe(Fp8Scaling scaling) {
  switch (scaling) {
    case Fp8Scaling::block:
      return "cuBLASLt fp8 with 1x128 / 128x128 block scales";
    case Fp8Scaling::per_tensor:
      return "cuBLASLt fp8 with per-tensor scales";
    case Fp8Scaling::per_tensor_fast_accumulation:
      return "cuBLASLt fp8 with per-tensor scales and fast accumulation";
  }
  return "cuBLASLt fp8";
}

void Fp8Reference::run(const GemmProblem& problem, Fp8Scaling scaling,
                       const BlockScaledInputs& inputs, bf16* d, cudaStream_t stream) {
  const BlockScaledOperands operands = inputs.operands();
  const bool block = scaling == Fp8Scaling::block;
  const void* a = block ? static_cast<const void*>(operands.a) : inputs.per_tensor_a();
  const void* b = block ? static_cast<const void*>(operands.b) : inputs.per_tensor_b();
  // The scales of its A (our B) and of its B (our A).
  const void* b_scales = block ? static_cast<const void*>(operands.b_scales)
                               : static_cast<const void*>(inputs.per_tensor_b_scale());
  const void* a_scales = block ? static_cast<const void*>(operands.a_scales)
                               : static_cast<const void*>(inputs.per_tensor_a_scale());
  Plan& plan = plan_for(Key{problem.m, problem.n, problem.k, scaling}, a_scales, b_scales);
  // The scales of these inputs (a cached plan may hold another problem's buffers).
  set_attribute(plan.operation, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, b_scales);
  set_attribute(plan.operation, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, a_scales);
  const float alpha = 1.0f, beta = 0.0f;
  CUDA_CHECK(cublasLtMatmul(handle_, plan.operation, &alpha, /*A=*/b, plan.b_layout,
                            /*B=*/a, plan.a_layout, &beta, /*C=*/d, plan.d_layout,
                            /*D=*/d, plan.d_layout, &plan.algo, workspace_.get(),
                            workspace_.bytes(), stream));
}

Fp8Reference::Plan& Fp8Reference::plan_for(const Key& key, const void* a_scales,
                                           const void* b_scales) {
  const auto cached = plans_.find(key);
  if (cached != plans_.end()) return *cached->second;
  const auto [m, n, k, scaling] = key;

  auto plan = std::make_unique<Plan>();
  CUDA_CHECK(cublasLtMatmulDescCreate(&plan->operation, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  // fp8 on Hopper takes only the "TN" form: both operands K-major, as the course stores them.
  set_attribute(plan->operation, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  set_attribute(plan->operation, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  // The tensor cores' fp8 sums promoted to fp32 now and then, as in the lesson (block scaling
  // refuses fast accumulation; per-tensor gets the same, for a fair comparison), unless fast
  // accumulation is asked for: the tensor cores' own sums over all of K.
  set_attribute(plan->operation, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                int8_t(scaling == Fp8Scaling::per_tensor_fast_accumulation ? 1 : 0));
  if (scaling == Fp8Scaling::block) {
    set_attribute(plan->operation, CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                  int32_t(CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F));
    set_attribute(plan->operation, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                  int32_t(CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F));
  }
  // The heuristic wants the scales' pointers (their alignment) before it chooses.
  set_attribute(plan->operation, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, b_scales);
  set_attribute(plan->operation, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, a_scales);
  CUDA_CHECK(cublasLtMatrixLayoutCreate(&plan->b_layout, CUDA_R_8F_E4M3, uint64_t(k), uint64_t(n), k));
  CUDA_CHECK(cublasLtMatrixLayoutCreate(&plan->a_layout, CUDA_R_8F_E4M3, uint64_t(k), uint64_t(m), k));
  CUDA_CHECK(cublasLtMatrixLayoutCreate(&plan->d_layout, CUDA_R_16BF, uint64_t(n), uint64_t(m), n));

  CUDA_CHECK(cublasLtMatmulPreferenceCreate(&plan->preference));
  const uint64_t workspace_bytes = kWorkspaceBytes;
  CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(plan->preference,
                                                  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &workspace_bytes, sizeof(workspace_bytes)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle_, plan->operation, plan->b_layout, plan->a_layout, plan->d_layout, plan->d_layout,
      plan->preference, /*requestedAlgoCount=*/1, &result, &found);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && found == 0))
    throw_cuda_error("cublasLtMatmulAlgoGetHeuristic",
                     "cuBLASLt has no fp8 algorithm (" + describe(scaling) + ") for M=" +
                         std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k),
                     __FILE__, __LINE__);
  check_status(status, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
  plan->algo = result.algo;
  return *plans_.emplace(key, std::move(plan)).first->second;
}

}  // namespace gemm
