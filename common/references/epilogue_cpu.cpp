#include "common/references/epilogue_cpu.hpp"

#include <stdexcept>

#include "common/activation.hpp"

namespace gemm {

std::vector<double> cpu_epilogue_fp64(const std::vector<double>& product, const GemmProblem& problem,
                                      const Epilogue& epilogue, const std::vector<float>& c,
                                      const std::vector<float>& bias) {
  const int64_t m = problem.m, n = problem.n;
  // C is part of the formula only when beta != 0, exactly as on the GPU (where it is not read).
  const bool uses_c = epilogue.beta != 0.0f;
  if (int64_t(product.size()) != m * n)
    throw std::invalid_argument("cpu_epilogue_fp64: the product does not have M x N values");
  if (uses_c && int64_t(c.size()) != m * n)
    throw std::invalid_argument("cpu_epilogue_fp64: beta != 0 but C does not have M x N values");
  if (!bias.empty() && int64_t(bias.size()) != n)
    throw std::invalid_argument("cpu_epilogue_fp64: the bias must have N values (or none)");

  const double alpha = epilogue.alpha, beta = epilogue.beta;
  std::vector<double> out(product.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const int64_t index = i * n + j;
      double x = alpha * product[index];
      if (uses_c) x += beta * double(c[index]);
      if (!bias.empty()) x += double(bias[j]);  // one bias value per column: the same for every row
      out[index] = activate(x, epilogue.activation);
    }
  return out;
}

}  // namespace gemm
