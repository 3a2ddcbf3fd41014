#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/harness/verify.hpp"

using gemm::allowed_error;
using gemm::normalized_error;

TEST(Tolerance, AllowedErrorIsRelativePlusRmsTerm) {
  // 2^-7 * |ref| + 2^-7 * rms
  EXPECT_DOUBLE_EQ(allowed_error(128.0, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(allowed_error(-128.0, 128.0), 2.0);
  EXPECT_DOUBLE_EQ(allowed_error(0.0, 64.0), 0.5);
}

TEST(Tolerance, ExactlyAtTheBoundPassesJustAboveFails) {
  // ref = 100, rms = 28: allowed = (100 + 28) / 128 = 1.
  EXPECT_DOUBLE_EQ(normalized_error(101.0, 100.0, 28.0), 1.0);
  EXPECT_GT(normalized_error(101.001, 100.0, 28.0), 1.0);
  EXPECT_DOUBLE_EQ(normalized_error(99.5, 100.0, 28.0), 0.5);
}

TEST(Tolerance, NearZeroValuesAreJudgedAgainstTheRms) {
  // ref close to 0 after cancellation: only the rms term applies.
  EXPECT_LE(normalized_error(0.05, 0.0, 8.0), 1.0);
  EXPECT_GT(normalized_error(0.07, 0.0, 8.0), 1.0);
}

TEST(Tolerance, NanAndInfNeverPass) {
  EXPECT_EQ(normalized_error(std::nan(""), 1.0, 1.0), INFINITY);
  EXPECT_EQ(normalized_error(INFINITY, INFINITY, 1.0), INFINITY);
  EXPECT_EQ(normalized_error(-INFINITY, 1.0, 1.0), INFINITY);
}

TEST(Tolerance, BfloatRoundingPassesWithHeadroom) {
  // bf16 keeps 8 significant bits: rounding 1 + 2^-8 to bf16 gives an error of at most 2^-9,
  // a quarter of the allowed 2^-7 relative error.
  EXPECT_LE(normalized_error(1.0, 1.0 + 1.0 / 512, 0.0), 0.26);
}

TEST(Tolerance, PoisonIsANegativeNaN) {
  // 0xFFFF: sign 1, exponent all ones, mantissa non-zero.
  EXPECT_EQ(gemm::kPoisonBits & 0x7F80, 0x7F80);
  EXPECT_NE(gemm::kPoisonBits & 0x007F, 0);
  EXPECT_NE(gemm::kPoisonBits & 0x8000, 0);
}
