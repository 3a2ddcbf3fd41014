#pragma once
// The XOR swizzle of shared-memory tiles, lessons 04-06 (and, on a 1024-byte aligned tile,
// exactly the 128-byte swizzle mode in which TMA writes and wgmma reads tiles from lesson 07 on).

#include "common/host_device.hpp"

namespace gemm {

// A tile row holds 64 bf16 = 128 bytes = 8 chunks of 16 bytes, and 128 bytes span all 32 banks
// of shared memory (4 bytes each). Stored plainly, chunk c of every row sits in the same 4 banks,
// so 8 lanes reading chunk c of 8 consecutive rows (one ldmatrix phase) hit one bank group 8
// times: an 8-way conflict. The swizzle stores logical chunk c of row r at physical chunk
// c XOR (r % 8): within any 8 consecutive rows, a given logical chunk lands in 8 different bank
// groups, while each row still holds its own 8 chunks (XOR with a constant is a permutation).
inline constexpr int kSwizzleRowElements = 64;  // bf16 per tile row
inline constexpr int kSwizzleChunkElements = 8; // bf16 per 16-byte chunk

GEMM_HOST_DEVICE constexpr int swizzle_chunk(int row, int chunk) { return chunk ^ (row % 8); }

// Element offset of (row, column) in a swizzled tile of 64-element rows.
GEMM_HOST_DEVICE constexpr int swizzled_offset(int row, int column) {
  return row * kSwizzleRowElements +
         swizzle_chunk(row, column / kSwizzleChunkElements) * kSwizzleChunkElements +
         column % kSwizzleChunkElements;
}

}  // namespace gemm
