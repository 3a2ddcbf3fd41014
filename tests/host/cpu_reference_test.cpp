#include <gtest/gtest.h>

#include <vector>

#include "common/references/reference.hpp"

using gemm::cpu_gemm_fp64;
using gemm::GemmProblem;

TEST(CpuReference, TwoByTwoByTwoWorkedByHand) {
  // A = [1 2; 3 4] (M x K), B = [5 6; 7 8] (N x K), D = A * B^T:
  //   D[0][0] = 1*5 + 2*6 = 17   D[0][1] = 1*7 + 2*8 = 23
  //   D[1][0] = 3*5 + 4*6 = 39   D[1][1] = 3*7 + 4*8 = 53
  const std::vector<double> d = cpu_gemm_fp64({1, 2, 3, 4}, {5, 6, 7, 8}, GemmProblem{2, 2, 2});
  EXPECT_EQ(d, (std::vector<double>{17, 23, 39, 53}));
}

TEST(CpuReference, RectangularShapesUseTheRightStrides) {
  // M = 1, N = 3, K = 2: D[0][j] = a . b_j with b_j the j-th row of B.
  const std::vector<double> d =
      cpu_gemm_fp64({2, -1}, {1, 0, 0, 1, 3, 4}, GemmProblem{1, 3, 2});
  EXPECT_EQ(d, (std::vector<double>{2, -1, 2}));
}

TEST(CpuReference, AccumulatesInDoublePrecision) {
  // 1 + 2^-30 - 1 is lost in fp32 but not in fp64.
  const double tiny = 1.0 / (1 << 30);
  const std::vector<double> d =
      cpu_gemm_fp64({1, float(tiny), -1}, {1, 1, 1}, GemmProblem{1, 1, 3});
  EXPECT_EQ(d[0], tiny);
}

TEST(CpuReference, RejectsOperandsOfTheWrongSize) {
  EXPECT_THROW(cpu_gemm_fp64({1, 2, 3}, {1, 2, 3, 4}, GemmProblem{2, 2, 2}), std::invalid_argument);
}
