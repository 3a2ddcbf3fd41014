#include "common/gemm.hpp"

#include <cstdint>

namespace gemm {

std::optional<std::string> shape_contract_violation(const GemmProblem& problem) {
  const struct {
    const char* name;
    int64_t value;
    int64_t minimum;
    int64_t multiple;
  } dims[] = {{"M", problem.m, 1, 1},
              {"N", problem.n, kShapeMultiple, kShapeMultiple},
              {"K", problem.k, kShapeMultiple, kShapeMultiple}};

  for (const auto& dim : dims) {
    const std::string value = std::to_string(dim.value);
    if (dim.value < dim.minimum)
      return std::string(dim.name) + " = " + value + " is too small: the shape contract needs " +
             dim.name + " >= " + std::to_string(dim.minimum);
    if (dim.value > kMaxDimension)
      return std::string(dim.name) + " = " + value +
             " is too large: the shape contract needs each of M, N, K <= 2^30 = 1073741824";
    if (dim.value % dim.multiple != 0)
      return std::string(dim.name) + " = " + value + " is not a multiple of " +
             std::to_string(dim.multiple) + ": the shape contract needs " + dim.name + " % " +
             std::to_string(dim.multiple) + " == 0 (rows of 16 bytes)";
  }
  return std::nullopt;
}

std::optional<std::string> block_scaled_contract_violation(const GemmProblem& problem) {
  if (auto violation = shape_contract_violation(problem)) return violation;
  if (problem.k % kBlockScaledKMultiple != 0)
    return "K = " + std::to_string(problem.k) + " is not a multiple of " +
           std::to_string(kBlockScaledKMultiple) + ": lesson 18's shape contract needs K % " +
           std::to_string(kBlockScaledKMultiple) + " == 0 (rows of e4m3 of 16 bytes)";
  return std::nullopt;
}

const char* activation_name(Activation activation) {
  switch (activation) {
    case Activation::none: return "none";
    case Activation::relu: return "relu";
    case Activation::gelu: return "gelu";
    case Activation::silu: return "silu";
  }
  return "unknown";
}

std::optional<Activation> parse_activation(const std::string& name) {
  for (Activation activation :
       {Activation::none, Activation::relu, Activation::gelu, Activation::silu})
    if (name == activation_name(activation)) return activation;
  return std::nullopt;
}

}  // namespace gemm
