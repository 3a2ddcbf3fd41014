#pragma once

#include <vector>

#include "common/gemm.hpp"

namespace gemm {

// Lesson 15's epilogue in fp64 on the CPU, applied to a product computed in fp64 (the result of
// cpu_gemm_fp64):
//
//   out[i * n + j] = act(alpha * product[i * n + j] + beta * c[i * n + j] + bias[j])
//
// The values come from the host vectors, never from the epilogue's c and bias pointers (those
// point to device memory); the epilogue gives alpha, beta and the activation.
//   c:    M x N values, row-major; read only when beta != 0 (may then be empty).
//   bias: N values, one per column of D; empty for no bias.
// Throws std::invalid_argument if a vector's size does not match the problem.
std::vector<double> cpu_epilogue_fp64(const std::vector<double>& product, const GemmProblem& problem,
                                      const Epilogue& epilogue, const std::vector<float>& c,
                                      const std::vector<float>& bias);

}  // namespace gemm
