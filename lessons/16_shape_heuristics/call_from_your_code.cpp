// Calling lesson 16 from a program of your own: the whole of what it takes, without the course's
// runner (run_lesson). Computes D = A * B^T for a 512-token layer of Llama 3.1 8B (512 x 4096 x
// 4096, bf16, A and B K-major as everywhere in the course) and checks one element on the CPU.
//
//   build: any target that links lesson16_kernels (the lesson's kernels, compiled once with
//          CMAKE_CUDA_ARCHITECTURES 90a, and its entry gemm::lessons::lesson16(); it brings
//          gemm_common: tensor maps, device facts, the check of the GPU);
//   run:   ./lesson16_call_example   (needs an sm_90a GPU: H100 or H200)
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/harness/runner.hpp"
#include "lessons/registry.hpp"

int main() {
  try {
    const gemm::GemmProblem problem{512, 4096, 4096};
    if (const auto broken = gemm::shape_contract_violation(problem)) {
      std::fprintf(stderr, "error: %s\n", broken->c_str());
      return 1;
    }
    if (const auto missing = gemm::missing_gpu()) {
      std::fprintf(stderr, "error: %s\n", missing->c_str());
      return 2;
    }
    // The course's own check: an sm_90a GPU, and a build that carries the 90a target.
    const gemm::Lesson& lesson = gemm::lessons::lesson16();
    if (const auto reason = gemm::unsupported_reason(lesson, gemm::query_device(0))) {
      std::fprintf(stderr, "error: %s\n", reason->c_str());
      return 2;
    }

    // Inputs: small exact values (multiples of 1/8 in [-1, 1]), so the CPU's check is simple.
    const size_t a_count = size_t(problem.m * problem.k), b_count = size_t(problem.n * problem.k);
    std::vector<gemm::bf16> a(a_count), b(b_count);
    for (size_t i = 0; i < a_count; ++i) a[i] = __float2bfloat16(float(int(i % 17) - 8) / 8);
    for (size_t i = 0; i < b_count; ++i) b[i] = __float2bfloat16(float(int(i % 13) - 6) / 8);
    gemm::bf16 *a_device, *b_device, *d_device;
    CUDA_CHECK(cudaMalloc(&a_device, a_count * sizeof(gemm::bf16)));
    CUDA_CHECK(cudaMalloc(&b_device, b_count * sizeof(gemm::bf16)));
    CUDA_CHECK(cudaMalloc(&d_device, size_t(problem.m * problem.n) * sizeof(gemm::bf16)));
    CUDA_CHECK(cudaMemcpy(a_device, a.data(), a_count * sizeof(gemm::bf16),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b_device, b.data(), b_count * sizeof(gemm::bf16),
                          cudaMemcpyHostToDevice));

    // The plan: the configuration the cost model picks for this problem on this GPU, and its
    // schedule. Make it once per problem, and launch on it as often as you like.
    const gemm::LaunchPlan plan = gemm::plan_launch(lesson, problem);
    // The workspace (Stream-K's flags and partial sums) that the plan needs: zeroed once when
    // allocated, and every launch leaves it zeroed. One launch at a time may use it: give each
    // stream its own.
    const size_t workspace_bytes = plan.workspace_bytes;
    void* workspace = nullptr;
    if (workspace_bytes > 0) {
      CUDA_CHECK(cudaMalloc(&workspace, workspace_bytes));
      CUDA_CHECK(cudaMemset(workspace, 0, workspace_bytes));
    }

    gemm::GemmArgs args;
    args.problem = problem;
    args.a = a_device;
    args.b = b_device;
    args.d = d_device;
    args.workspace = workspace;  // the epilogue stays the plain product: D = A * B^T
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    gemm::launch_planned(lesson, args, plan, stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));

    gemm::bf16 d_00;
    CUDA_CHECK(cudaMemcpy(&d_00, d_device, sizeof(gemm::bf16), cudaMemcpyDeviceToHost));
    double expected = 0;
    for (int64_t k = 0; k < problem.k; ++k)
      expected += double(__bfloat162float(a[k])) * double(__bfloat162float(b[k]));
    const double got = __bfloat162float(d_00);
    std::printf("configuration %s: D[0][0] = %g, CPU %g\n",
                gemm::configuration_name(lesson, plan).c_str(), got, expected);

    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(workspace));
    CUDA_CHECK(cudaFree(d_device));
    CUDA_CHECK(cudaFree(b_device));
    CUDA_CHECK(cudaFree(a_device));
    // bf16 keeps 8 bits of mantissa: D is right to within 2^-8 of its size.
    return std::fabs(got - expected) <= std::fabs(expected) / 256 + 1e-3 ? 0 : 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}
