#pragma once
// Host side of TMA: the tensor map, a 128-byte descriptor of a global-memory matrix and of the
// box (tile) that one TMA instruction copies. Kernels receive it as a
// `__grid_constant__ const CUtensorMap` parameter and pass its address to ptx::tma_load_2d.

#include <array>
#include <cstdint>
#include <string>

#include <cuda.h>  // CUtensorMap and its enums (types only: libcuda is never linked)

namespace gemm {

// Exactly what cuTensorMapEncodeTiled receives for a 2D bf16 tiled map, besides the global
// address. Dimension 0 is the inner (contiguous) one: for a K-major operand, K; dimension 1 is
// the outer one, the rows.
//
// oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE means that the elements of a box that lie outside
// the matrix are written to shared memory as ZEROS (the other choice writes NaNs). Zeros add
// nothing to a dot product, which is what makes ragged M, N and K correct with no special case:
// the last tiles simply hang over the edge of the matrix.
struct TensorMapArgs {
  CUtensorMapDataType data_type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  std::array<cuuint64_t, 2> global_dims{};     // elements: {inner, outer}
  std::array<cuuint64_t, 1> global_strides{};  // bytes from one outer index to the next
  std::array<cuuint32_t, 2> box_dims{};        // elements per box: {inner, outer}
  std::array<cuuint32_t, 2> element_strides{1, 1};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  CUtensorMapL2promotion l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  CUtensorMapFloatOOBfill oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;  // zeros, see above
};

// The rows of a box of an operand whose tile has `tile_rows` rows: the tile's rows, or, where the
// operand has fewer (A in a decode step: 1 to 63 tokens against a 64- or 128-row tile), its rows
// rounded up to the 8 rows of the swizzle's pattern. TMA fills a box's rows past the end of the
// matrix with zeros, and that fill is slow; the tile's rows past a shorter box keep what the stage
// held before, and make only rows of D past the matrix, which the TMA store clips.
inline int operand_box_rows(int64_t rows, int tile_rows) {
  const int64_t pattern_rows = (rows + 7) / 8 * 8;
  return pattern_rows < tile_rows ? int(pattern_rows) : tile_rows;
}

// The map arguments for a row-major `rows` x `k` bf16 matrix read in boxes of `box_rows` x `box_k`
// (A is M x K, B is N x K): inner dimension K, outer dimension the rows. Checks what the driver
// would reject, and throws std::invalid_argument with a one-line message naming the rule:
// sizes below 1 or above 2^32 - 1, a row stride that is not a multiple of 16 bytes, box sizes
// outside 1..256, an inner box that is not a multiple of 16 bytes or wider than the swizzle span
// (128 bytes = 64 bf16 for CU_TENSOR_MAP_SWIZZLE_128B).
TensorMapArgs kmajor_tile_map_args(int64_t rows, int64_t k, int box_rows, int box_k,
                                   CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B);

// The elements a tensor map may hold besides bf16: lesson 18's e4m3 operands (1 byte) and fp32
// scales (4 bytes).
enum class MapElement { bf16, e4m3, fp32 };

// The same for a matrix of `element`s: the rules scale with the element's bytes (a row of e4m3
// needs K % 16 == 0, and 128 of them fill the 128-byte swizzle's span).
TensorMapArgs kmajor_tile_map_args(MapElement element, int64_t rows, int64_t k, int box_rows,
                                   int box_k,
                                   CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B);

// The swizzle whose span is a row of `row_bytes` (128, 64 or 32; std::invalid_argument otherwise):
// the final kernel's epilogue subtiles are 64, 32 or 16 bf16 wide (common/hopper/kernel_tile.hpp).
CUtensorMapSwizzle swizzle_of_row_bytes(int row_bytes);

// One line describing the arguments, for error messages:
// "globalDim = {264, 333}, globalStrides = {528} bytes, boxDim = {64, 128}, swizzle = 128B".
std::string to_string(const TensorMapArgs& args);

// Encodes the tensor map of the matrix at `global_address` (device memory, 16-byte aligned, else
// std::invalid_argument). cuTensorMapEncodeTiled is a driver function; it is obtained through
// the runtime (cudaGetDriverEntryPointByVersion), so nothing links libcuda. Throws CudaError if
// the driver lacks the function or rejects the arguments (with the CUresult and the arguments).
CUtensorMap make_tensor_map(const void* global_address, const TensorMapArgs& args);

}  // namespace gemm
