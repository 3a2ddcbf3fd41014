#include <stdexcept>

#include "common/references/reference.hpp"

namespace gemm {

std::vector<double> cpu_gemm_fp64(const std::vector<float>& a, const std::vector<float>& b,
                                  const GemmProblem& problem) {
  const int64_t m = problem.m, n = problem.n, k = problem.k;
  if (int64_t(a.size()) != m * k || int64_t(b.size()) != n * k)
    throw std::invalid_argument("cpu_gemm_fp64: operand sizes do not match the problem");
  std::vector<double> d(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t kk = 0; kk < k; ++kk) sum += double(a[i * k + kk]) * double(b[j * k + kk]);
      d[i * n + j] = sum;
    }
  return d;
}

}  // namespace gemm
