#include "common/references/epilogue_reference.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "common/activation.hpp"
#include "common/cuda_check.hpp"

namespace gemm {
namespace {

// The scratch memory cuBLASLt may use: 32 MiB, what NVIDIA recommends for Hopper. Some of its
// fastest kernels (split-K, stream-K) need it, and a baseline should be cuBLASLt at its best.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

constexpr int kThreads = 256;
// The most blocks a 1-D grid-stride kernel below launches: enough to fill an H100 several times.
constexpr size_t kMaxBlocks = 1024;
// The largest gridDim.y CUDA allows.
constexpr int64_t kMaxGridY = 65535;

// bf16 -> fp32, exact: every bf16 value is a float with the low 16 bits of its significand zero.
__global__ void widen_kernel(const bf16* in, float* out, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    out[i] = __bfloat162float(in[i]);
}

void widen(const bf16* in, float* out, size_t count, cudaStream_t stream) {
  const size_t blocks = std::min(ceil_div(count, size_t(kThreads)), kMaxBlocks);
  widen_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(in, out, count);
  CUDA_CHECK(cudaGetLastError());
}

__device__ void store(float* out, float value) { *out = value; }
// Round to nearest even, as cuBLASLt rounds its bf16 output.
__device__ void store(bf16* out, float value) { *out = __float2bfloat16(value); }

// d = silu(product + beta * c + bias), with product = alpha * A * B^T from cuBLASLt in fp32.
// c is nullptr when beta == 0 (C is then not read); bias is nullptr for no bias.
// Each thread owns one column and walks down the rows: it loads its bias value once, and the
// threads of a warp touch consecutive columns of a row, so every load and store is coalesced.
// Columns cover gridDim.x * blockDim.x >= N; rows are shared out over gridDim.y.
template <class Output>
__global__ void silu_epilogue_kernel(const float* product, const bf16* c, float beta,
                                     const bf16* bias, Output* d, int64_t m, int64_t n) {
  const int64_t column = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (column >= n) return;
  // Adding 0 for no bias changes no value and keeps the loop free of a second branch.
  const float column_bias = bias ? __bfloat162float(bias[column]) : 0.0f;
  for (int64_t row = blockIdx.y; row < m; row += gridDim.y) {
    const int64_t index = row * n + column;
    float x = product[index];
    if (c) x += beta * __bfloat162float(c[index]);
    store(d + index, activate<Activation::silu>(x + column_bias));
  }
}

void launch_silu_epilogue(const GemmProblem& problem, const float* product, const Epilogue& epilogue,
                          void* d, cudaDataType_t d_type, cudaStream_t stream) {
  const bf16* c = epilogue.beta != 0.0f ? epilogue.c : nullptr;
  const dim3 grid(unsigned(ceil_div(problem.n, int64_t(kThreads))),
                  unsigned(std::min(problem.m, kMaxGridY)));
  if (d_type == CUDA_R_32F)
    silu_epilogue_kernel<<<grid, kThreads, 0, stream>>>(product, c, epilogue.beta, epilogue.bias,
                                                        static_cast<float*>(d), problem.m, problem.n);
  else
    silu_epilogue_kernel<<<grid, kThreads, 0, stream>>>(product, c, epilogue.beta, epilogue.bias,
                                                        static_cast<bf16*>(d), problem.m, problem.n);
  CUDA_CHECK(cudaGetLastError());
}

// cuBLASLt's fused epilogue for an activation, with or without bias.
cublasLtEpilogue_t fused_epilogue(Activation activation, bool has_bias) {
  switch (activation) {
    case Activation::none: return has_bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case Activation::relu: return has_bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::gelu: return has_bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case Activation::silu: break;
  }
  throw std::logic_error("cuBLASLt has no fused epilogue for " +
                         std::string(activation_name(activation)));
}

// The name of a cuBLASLt epilogue without its CUBLASLT_EPILOGUE_ prefix.
const char* epilogue_name(cublasLtEpilogue_t epilogue) {
  switch (epilogue) {
    case CUBLASLT_EPILOGUE_BIAS: return "BIAS";
    case CUBLASLT_EPILOGUE_RELU: return "RELU";
    case CUBLASLT_EPILOGUE_RELU_BIAS: return "RELU_BIAS";
    case CUBLASLT_EPILOGUE_GELU: return "GELU";
    case CUBLASLT_EPILOGUE_GELU_BIAS: return "GELU_BIAS";
    default: return "DEFAULT";  // the only other one this class uses
  }
}

const char* type_name(cudaDataType_t type) { return type == CUDA_R_32F ? "fp32" : "bf16"; }

// The largest power of two, at most 256, that divides the address: the alignment cuBLASLt may
// assume for the pointer (256 is the most it asks about).
uint32_t alignment_of(const void* pointer) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  uint32_t alignment = 256;
  while (alignment > 1 && address % alignment != 0) alignment /= 2;
  return alignment;
}

template <class T>
void set_attribute(cublasLtMatmulDesc_t operation, cublasLtMatmulDescAttributes_t attribute,
                   const T& value) {
  CUDA_CHECK(cublasLtMatmulDescSetAttribute(operation, attribute, &value, sizeof(value)));
}

// The preferences handed to the heuristic, freed however plan_for leaves.
struct Preference {
  cublasLtMatmulPreference_t handle = nullptr;
  Preference() { CUDA_CHECK(cublasLtMatmulPreferenceCreate(&handle)); }
  ~Preference() { cublasLtMatmulPreferenceDestroy(handle); }
  Preference(const Preference&) = delete;
  Preference& operator=(const Preference&) = delete;

  template <class T>
  void set(cublasLtMatmulPreferenceAttributes_t attribute, const T& value) {
    CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(handle, attribute, &value, sizeof(value)));
  }
};

}  // namespace

// cuBLASLt's names for our matrices: its A operand is our B, its B operand is our A, and one
// layout serves as both its C and its D (C must have D's type and shape).
struct EpilogueReference::Plan {
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t b_layout = nullptr;  // our B: cuBLASLt's A
  cublasLtMatrixLayout_t a_layout = nullptr;  // our A: cuBLASLt's B
  cublasLtMatrixLayout_t d_layout = nullptr;  // C and D
  cublasLtMatmulAlgo_t algo{};
  const void* bias = nullptr;  // the bias pointer `operation` holds now

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    // A plan whose construction failed half-way has only some of them.
    if (d_layout) cublasLtMatrixLayoutDestroy(d_layout);
    if (a_layout) cublasLtMatrixLayoutDestroy(a_layout);
    if (b_layout) cublasLtMatrixLayoutDestroy(b_layout);
    if (operation) cublasLtMatmulDescDestroy(operation);
  }
};

bool EpilogueReference::PlanKey::operator<(const PlanKey& other) const {
  const auto fields = [](const PlanKey& key) {
    return std::tie(key.m, key.n, key.k, key.epilogue, key.d_type, key.a_alignment, key.b_alignment,
                    key.c_alignment, key.d_alignment, key.bias_alignment);
  };
  return fields(*this) < fields(other);
}

EpilogueReference::EpilogueReference() : workspace_(kWorkspaceBytes) {
  CUDA_CHECK(cublasLtCreate(&handle_));
}

EpilogueReference::~EpilogueReference() {
  plans_.clear();  // their descriptors first, then the library context they were made for
  if (handle_) cublasLtDestroy(handle_);
}

bool EpilogueReference::fused(Activation activation) {
  // cuBLASLt's epilogues know ReLU and GELU (and none); SiLU is the one they lack.
  return activation != Activation::silu;
}

std::string EpilogueReference::describe(const Epilogue& epilogue) {
  if (!fused(epilogue.activation)) return "cuBLASLt + elementwise SiLU";
  return std::string("cuBLASLt ") +
         epilogue_name(fused_epilogue(epilogue.activation, epilogue.bias != nullptr)) + " epilogue";
}

void EpilogueReference::run(const GemmProblem& problem, const bf16* a, const bf16* b,
                            const Epilogue& epilogue, void* d, cudaDataType_t d_type,
                            cudaStream_t stream) {
  if (d_type != CUDA_R_32F && d_type != CUDA_R_16BF)
    throw std::invalid_argument("EpilogueReference::run: the output type must be fp32 or bf16");
  const bool uses_c = epilogue.beta != 0.0f;
  if (uses_c && epilogue.c == nullptr)
    throw std::invalid_argument("EpilogueReference::run: beta != 0 but C is not given");
  const size_t elements = size_t(problem.m * problem.n);

  if (!fused(epilogue.activation)) {
    // No fused epilogue: alpha * A * B^T in fp32 (no C, no bias), then one elementwise pass.
    product_fp32_.resize(elements);
    matmul(problem, a, b, epilogue.alpha, /*beta=*/0.0f, /*c=*/product_fp32_.get(), /*bias=*/nullptr,
           CUBLASLT_EPILOGUE_DEFAULT, product_fp32_.get(), CUDA_R_32F, stream);
    launch_silu_epilogue(problem, product_fp32_.get(), epilogue, d, d_type, stream);
    return;
  }

  // With beta == 0 cuBLASLt does not read C, but it still wants a matrix of D's type and shape
  // there: D itself is one.
  const void* c = uses_c ? static_cast<const void*>(epilogue.c) : d;
  const void* bias = epilogue.bias;
  if (d_type == CUDA_R_32F) {
    // cuBLASLt wants C in the output type, and the bias too (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
    // "the same type as the output matrix"). Widened on every call, not cached by pointer: the
    // caller may have written new values into the same buffers since the last call.
    if (uses_c) {
      c_fp32_.resize(elements);
      widen(epilogue.c, c_fp32_.get(), elements, stream);
      c = c_fp32_.get();
    }
    if (bias) {
      bias_fp32_.resize(size_t(problem.n));
      widen(epilogue.bias, bias_fp32_.get(), size_t(problem.n), stream);
      bias = bias_fp32_.get();
    }
  }
  matmul(problem, a, b, epilogue.alpha, epilogue.beta, c, bias,
         fused_epilogue(epilogue.activation, bias != nullptr), d, d_type, stream);
}

void EpilogueReference::matmul(const GemmProblem& problem, const bf16* a, const bf16* b, float alpha,
                               float beta, const void* c, const void* bias,
                               cublasLtEpilogue_t epilogue, void* d, cudaDataType_t d_type,
                               cudaStream_t stream) {
  const PlanKey key{problem.m, problem.n, problem.k, epilogue, d_type,
                    alignment_of(a), alignment_of(b), alignment_of(c), alignment_of(d),
                    alignment_of(bias)};
  Plan& plan = plan_for(key, bias);
  // A cached plan may hold another bias buffer (aligned the same way): point it at this one.
  if (plan.bias != bias) {
    set_attribute(plan.operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
    plan.bias = bias;
  }
  // cuBLASLt computes D^T = B * A^T (class comment): its A is our B, its B is our A.
  CUDA_CHECK(cublasLtMatmul(handle_, plan.operation, &alpha,
                            /*A=*/b, plan.b_layout,
                            /*B=*/a, plan.a_layout, &beta,
                            /*C=*/c, plan.d_layout,
                            /*D=*/d, plan.d_layout, &plan.algo,
                            workspace_.get(), workspace_.bytes(), stream));
}

EpilogueReference::Plan& EpilogueReference::plan_for(const PlanKey& key, const void* bias) {
  const auto cached = plans_.find(key);
  if (cached != plans_.end()) return *cached->second;

  auto plan = std::make_unique<Plan>();
  // fp32 accumulation, and alpha, beta as floats.
  CUDA_CHECK(cublasLtMatmulDescCreate(&plan->operation, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  set_attribute(plan->operation, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  set_attribute(plan->operation, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  set_attribute(plan->operation, CUBLASLT_MATMUL_DESC_EPILOGUE, key.epilogue);
  if (bias) {
    // The bias must have the output's type (fp32 for fp32 output, bf16 for bf16 output). Said
    // explicitly, although it is the default, so that the code states the rule.
    set_attribute(plan->operation, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t(key.d_type));
    // The heuristic reads the pointer's alignment from here, so it must be set before asking.
    set_attribute(plan->operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
    plan->bias = bias;
  }

  // Our row-major matrices as cuBLASLt's column-major ones: B is K x N and A is K x M, both with
  // leading dimension K; D (and C) is N x M with leading dimension N.
  CUDA_CHECK(cublasLtMatrixLayoutCreate(&plan->b_layout, CUDA_R_16BF, uint64_t(key.k),
                                        uint64_t(key.n), key.k));
  CUDA_CHECK(cublasLtMatrixLayoutCreate(&plan->a_layout, CUDA_R_16BF, uint64_t(key.k),
                                        uint64_t(key.m), key.k));
  CUDA_CHECK(cublasLtMatrixLayoutCreate(&plan->d_layout, key.d_type, uint64_t(key.n),
                                        uint64_t(key.m), key.n));

  Preference preference;
  preference.set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(kWorkspaceBytes));
  preference.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.b_alignment);  // its A: our B
  preference.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.a_alignment);  // its B: our A
  preference.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.c_alignment);
  preference.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.d_alignment);

  // The heuristic's first choice: what cuBLASLt itself would run.
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle_, plan->operation, plan->b_layout, plan->a_layout, plan->d_layout, plan->d_layout,
      preference.handle, /*requestedAlgoCount=*/1, &result, &found);
  // cuBLASLt says "not supported" when no algorithm fits; any other error is a real failure.
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && found == 0))
    throw_cuda_error("cublasLtMatmulAlgoGetHeuristic",
                     "cuBLASLt has no algorithm for M=" + std::to_string(key.m) +
                         " N=" + std::to_string(key.n) + " K=" + std::to_string(key.k) +
                         " with the " + epilogue_name(key.epilogue) + " epilogue and " +
                         type_name(key.d_type) + " output",
                     __FILE__, __LINE__);
  check_status(status, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
  plan->algo = result.algo;

  return *plans_.emplace(key, std::move(plan)).first->second;
}

}  // namespace gemm
