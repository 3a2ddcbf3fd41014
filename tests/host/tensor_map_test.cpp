#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/tensor_map.hpp"

// make_tensor_map needs a CUDA driver and device memory: it is exercised by the GPU tests of the
// TMA lessons. Here: the arguments it passes to the driver, and the checks made before.

using gemm::kmajor_tile_map_args;
using gemm::TensorMapArgs;

namespace {

// The message of the std::invalid_argument that kmajor_tile_map_args throws, or "" if none.
std::string rejection(int64_t rows, int64_t k, int box_rows, int box_k,
                      CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
  try {
    kmajor_tile_map_args(rows, k, box_rows, box_k, swizzle);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST(TensorMapArgs, RaggedOperandWith128x64Box) {
  // A = 333 x 264 bf16: inner dimension K = 264, outer the 333 rows; a row is 264 * 2 = 528 bytes.
  const TensorMapArgs args = kmajor_tile_map_args(333, 264, 128, 64);
  EXPECT_EQ(args.data_type, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(args.global_dims[0], 264u);
  EXPECT_EQ(args.global_dims[1], 333u);
  EXPECT_EQ(args.global_strides[0], 528u);
  EXPECT_EQ(args.box_dims[0], 64u);
  EXPECT_EQ(args.box_dims[1], 128u);
  EXPECT_EQ(args.element_strides[0], 1u);
  EXPECT_EQ(args.element_strides[1], 1u);
  EXPECT_EQ(args.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(args.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(args.l2_promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  // Out-of-bounds elements of a box are zero-filled: what makes ragged M, N, K work.
  EXPECT_EQ(args.oob_fill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

TEST(TensorMapArgs, TinyAndLargeShapes) {
  // M = 1, K = 8: one 16-byte row; the box may be larger than the matrix (the rest is zeros).
  const TensorMapArgs tiny = kmajor_tile_map_args(1, 8, 128, 64);
  EXPECT_EQ(tiny.global_dims[0], 8u);
  EXPECT_EQ(tiny.global_dims[1], 1u);
  EXPECT_EQ(tiny.global_strides[0], 16u);

  // The largest shape of the course's contract: 2^30 rows, K = 2^30 (2 GiB rows).
  const TensorMapArgs large = kmajor_tile_map_args(1073741824, 1073741824, 256, 64);
  EXPECT_EQ(large.global_dims[1], 1073741824u);
  EXPECT_EQ(large.global_strides[0], 2147483648u);
  EXPECT_EQ(large.box_dims[1], 256u);
}

TEST(TensorMapArgs, OtherSwizzleModes) {
  EXPECT_EQ(kmajor_tile_map_args(64, 64, 64, 32, CU_TENSOR_MAP_SWIZZLE_64B).swizzle,
            CU_TENSOR_MAP_SWIZZLE_64B);
  // Without a swizzle the inner box side may be any multiple of 16 bytes up to 256 elements.
  EXPECT_EQ(kmajor_tile_map_args(64, 512, 64, 256, CU_TENSOR_MAP_SWIZZLE_NONE).box_dims[0], 256u);
}

TEST(TensorMapArgs, RejectsEmptyMatrices) {
  EXPECT_EQ(rejection(0, 64, 128, 64), "tensor map: rows = 0 must be at least 1");
  EXPECT_EQ(rejection(64, 0, 128, 64), "tensor map: K = 0 must be at least 1");
}

TEST(TensorMapArgs, RejectsDimensionsBeyond32Bits) {
  EXPECT_EQ(rejection(int64_t(1) << 32, 64, 128, 64),
            "tensor map: rows = 4294967296 is larger than TMA's 2^32 - 1 elements");
  EXPECT_EQ(rejection(64, int64_t(1) << 33, 128, 64),
            "tensor map: K = 8589934592 is larger than TMA's 2^32 - 1 elements");
}

TEST(TensorMapArgs, RejectsRowStrideNotMultipleOf16Bytes) {
  EXPECT_EQ(rejection(64, 100, 128, 64),
            "tensor map: a row of K = 100 bf16 is 200 bytes, not a multiple of 16 bytes as TMA "
            "needs (K % 8 == 0)");
}

TEST(TensorMapArgs, RejectsBoxSizesOutside1To256) {
  EXPECT_EQ(rejection(512, 64, 0, 64),
            "tensor map: box rows = 0 is outside TMA's box size range 1..256");
  EXPECT_EQ(rejection(512, 64, 257, 64),
            "tensor map: box rows = 257 is outside TMA's box size range 1..256");
  EXPECT_EQ(rejection(512, 1024, 64, 512, CU_TENSOR_MAP_SWIZZLE_NONE),
            "tensor map: box K = 512 is outside TMA's box size range 1..256");
}

TEST(TensorMapArgs, RejectsInnerBoxNotMultipleOf16Bytes) {
  EXPECT_EQ(rejection(64, 64, 64, 4),
            "tensor map: box K = 4 is 8 bytes, not a multiple of 16 bytes as TMA needs "
            "(box K % 8 == 0)");
}

TEST(TensorMapArgs, RejectsInnerBoxWiderThanTheSwizzleSpan) {
  // 128B swizzle: at most 128 bytes = 64 bf16 per box row.
  EXPECT_EQ(rejection(256, 256, 128, 128),
            "tensor map: box K = 128 is 256 bytes, wider than the 128-byte span of the 128B "
            "swizzle (at most 64 bf16)");
  EXPECT_EQ(rejection(256, 256, 128, 64, CU_TENSOR_MAP_SWIZZLE_64B),
            "tensor map: box K = 64 is 128 bytes, wider than the 64-byte span of the 64B "
            "swizzle (at most 32 bf16)");
}

// Lesson 18's maps: e4m3 operands (1 byte: 128 of them fill the 128-byte swizzle's span, a row
// needs K % 16 == 0) and fp32 scales (4 bytes).
TEST(TensorMapArgs, OtherElementTypes) {
  using gemm::MapElement;
  const auto e4m3 = kmajor_tile_map_args(MapElement::e4m3, 200, 272, 128, 128);
  EXPECT_EQ(e4m3.data_type, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(e4m3.global_strides[0], 272u);
  EXPECT_EQ(e4m3.box_dims[0], 128u);
  const auto scales =
      kmajor_tile_map_args(MapElement::fp32, 3, 200, 1, 128, CU_TENSOR_MAP_SWIZZLE_NONE);
  EXPECT_EQ(scales.data_type, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(scales.global_strides[0], 800u);
  const auto rejected = [](auto... arguments) {
    try {
      kmajor_tile_map_args(arguments...);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  EXPECT_EQ(rejected(MapElement::e4m3, 64, 200, 64, 128, CU_TENSOR_MAP_SWIZZLE_128B),
            "tensor map: a row of K = 200 e4m3 is 200 bytes, not a multiple of 16 bytes as TMA "
            "needs (K % 16 == 0)");
  EXPECT_EQ(rejected(MapElement::e4m3, 64, 512, 64, 256, CU_TENSOR_MAP_SWIZZLE_128B),
            "tensor map: box K = 256 is 256 bytes, wider than the 128-byte span of the 128B "
            "swizzle (at most 128 e4m3)");
}

TEST(TensorMapArgs, MessagesAreOneLine) {
  for (const std::string& message :
       {rejection(0, 64, 128, 64), rejection(64, 100, 128, 64), rejection(64, 64, 300, 64),
        rejection(64, 64, 64, 128)}) {
    ASSERT_FALSE(message.empty());
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(TensorMapArgs, DescribesItselfForErrorMessages) {
  EXPECT_EQ(gemm::to_string(kmajor_tile_map_args(333, 264, 128, 64)),
            "globalDim = {264, 333}, globalStrides = {528} bytes, boxDim = {64, 128}, "
            "swizzle = 128B");
}

// A decode step's A is shorter than a tile: its box holds its rows, rounded up to the swizzle's
// 8-row pattern, and never more than the tile's.
TEST(OperandBoxRows, ShortOperandsGetShortBoxes) {
  EXPECT_EQ(gemm::operand_box_rows(1, 64), 8);
  EXPECT_EQ(gemm::operand_box_rows(8, 64), 8);
  EXPECT_EQ(gemm::operand_box_rows(9, 128), 16);
  EXPECT_EQ(gemm::operand_box_rows(63, 64), 64);
  EXPECT_EQ(gemm::operand_box_rows(64, 64), 64);
  EXPECT_EQ(gemm::operand_box_rows(100, 64), 64);
  EXPECT_EQ(gemm::operand_box_rows(int64_t(1) << 40, 128), 128);
}
