#include <gtest/gtest.h>

#include "common/gemm.hpp"

using gemm::GemmProblem;
using gemm::shape_contract_violation;

TEST(ShapeContract, AcceptsEveryShapeInsideTheContract) {
  for (const GemmProblem& shape : {GemmProblem{1, 8, 8}, GemmProblem{4096, 4096, 4096},
                                   GemmProblem{333, 136, 264}, GemmProblem{1, 1073741824, 8},
                                   GemmProblem{1073741824, 8, 8}, GemmProblem{8, 8, 1073741824}})
    EXPECT_FALSE(shape_contract_violation(shape))
        << shape.m << "x" << shape.n << "x" << shape.k << ": " << *shape_contract_violation(shape);
}

TEST(ShapeContract, RejectsZeroM) {
  EXPECT_EQ(shape_contract_violation({0, 64, 64}),
            "M = 0 is too small: the shape contract needs M >= 1");
}

TEST(ShapeContract, RejectsNNotMultipleOf8) {
  EXPECT_EQ(shape_contract_violation({64, 12, 64}),
            "N = 12 is not a multiple of 8: the shape contract needs N % 8 == 0 (rows of 16 bytes)");
}

TEST(ShapeContract, RejectsKBelow8) {
  EXPECT_EQ(shape_contract_violation({64, 64, 4}),
            "K = 4 is too small: the shape contract needs K >= 8");
}

TEST(ShapeContract, RejectsKNotMultipleOf8) {
  EXPECT_EQ(shape_contract_violation({64, 64, 100}),
            "K = 100 is not a multiple of 8: the shape contract needs K % 8 == 0 (rows of 16 bytes)");
}

TEST(ShapeContract, RejectsSizesBeyond2To30) {
  // The limit keeps every kernel's 32-bit index arithmetic (row + 8 < M, tile counts) exact.
  EXPECT_EQ(gemm::kMaxDimension, int64_t(1) << 30);
  const auto violation = shape_contract_violation({(int64_t(1) << 30) + 1, 64, 64});
  ASSERT_TRUE(violation);
  EXPECT_EQ(*violation,
            "M = 1073741825 is too large: the shape contract needs each of M, N, K <= 2^30 = "
            "1073741824");
  EXPECT_TRUE(shape_contract_violation({64, (int64_t(1) << 30) + 8, 64}));
  EXPECT_TRUE(shape_contract_violation({64, 64, int64_t(1) << 31}));
}

TEST(Activation, NamesRoundTrip) {
  for (gemm::Activation activation : {gemm::Activation::none, gemm::Activation::relu,
                                      gemm::Activation::gelu, gemm::Activation::silu})
    EXPECT_EQ(gemm::parse_activation(gemm::activation_name(activation)), activation);
  EXPECT_FALSE(gemm::parse_activation("tanh"));
  EXPECT_FALSE(gemm::parse_activation(""));
}

TEST(ShapeContract, ReportsTheFirstBrokenRuleOnly) {
  // M, N and K all break the contract: the message names M, in one line.
  const auto violation = shape_contract_violation({0, 3, 5});
  ASSERT_TRUE(violation);
  EXPECT_EQ(violation->rfind("M = 0", 0), 0u);
  EXPECT_EQ(violation->find('\n'), std::string::npos);
}

TEST(CeilDiv, RoundsUp) {
  EXPECT_EQ(gemm::ceil_div(128, 128), 1);
  EXPECT_EQ(gemm::ceil_div(129, 128), 2);
  EXPECT_EQ(gemm::ceil_div(1, 128), 1);
  EXPECT_EQ(gemm::ceil_div<int64_t>(int64_t(1) << 40, 3), 366503875926);
}

// Lesson 18's contract: the course's, and K % 16 == 0 (rows of e4m3 of 16 bytes); a K that ends
// inside a 128-wide scale block is inside it.
TEST(BlockScaledContract, AcceptsKMultiplesOf16) {
  for (const GemmProblem& shape :
       {GemmProblem{1, 8, 16}, GemmProblem{333, 136, 272}, GemmProblem{4096, 4096, 4096}})
    EXPECT_FALSE(gemm::block_scaled_contract_violation(shape))
        << shape.m << "x" << shape.n << "x" << shape.k;
}

TEST(BlockScaledContract, RejectsKNotMultipleOf16AndTheCoursesRules) {
  EXPECT_EQ(gemm::block_scaled_contract_violation({64, 64, 264}),
            "K = 264 is not a multiple of 16: lesson 18's shape contract needs K % 16 == 0 (rows "
            "of e4m3 of 16 bytes)");
  EXPECT_EQ(gemm::block_scaled_contract_violation({64, 12, 64}),
            shape_contract_violation({64, 12, 64}));
}

TEST(BlockScaledContract, ScaleLayouts) {
  using gemm::BlockScaledOperands;
  EXPECT_EQ(BlockScaledOperands::k_blocks(128), 1);
  EXPECT_EQ(BlockScaledOperands::k_blocks(144), 2);
  EXPECT_EQ(BlockScaledOperands::scale_rows(1), 4);    // 16 bytes of floats per row of scales
  EXPECT_EQ(BlockScaledOperands::scale_rows(200), 200);
  EXPECT_EQ(BlockScaledOperands::b_scale_stride(400), 4);  // 4 blocks: one 16-byte row
  EXPECT_EQ(BlockScaledOperands::b_scale_stride(640), 8);  // 5 blocks, padded to 8
}
