#pragma once
// The shared-memory matrix descriptor of wgmma: one 64-bit value that tells the tensor cores
// where an operand tile starts in shared memory and how it is laid out.
//
// Bit layout (PTX ISA, "Matrix Descriptor Format"):
//   bits  0-13  start address      encode(address)  the tile's first byte in shared memory
//   bits 16-29  leading byte offset encode(LBO)     see below
//   bits 32-45  stride byte offset  encode(SBO)     from one group of 8 rows to the next
//   bits 49-51  base offset         0               the tile starts on a swizzle-pattern boundary
//   bits 62-63  layout type         SmemSwizzle     0 none, 1 128B, 2 64B, 3 32B swizzle
// where encode(x) = (x & 0x3FFFF) >> 4: byte values are multiples of 16, stored without their
// 4 zero bits, 14 bits each. All other bits are 0.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor
//
// The layout the course uses everywhere (what TMA writes with CU_TENSOR_MAP_SWIZZLE_128B):
// a K-major tile of R rows (rows of M for A, of N for B) by 64 K values,
//   - each row is 64 bf16 = 128 bytes, and row r starts at byte r * 128 of the tile;
//   - the eight 16-byte chunks of a row are permuted: chunk c of row r is stored at chunk
//     position c ^ (r % 8) (the "128B swizzle"), so the 8 rows of a group hit 8 different bank
//     groups when a column of chunks is read;
//   - 8 rows form a 1024-byte "core matrix group", the repeating unit of the swizzle; group g
//     starts at byte g * 1024: SBO = 1024;
//   - LBO is not used by swizzled K-major layouts (the PTX ISA says "assumed to be 1"); the
//     course sets it to 16 bytes, encoded 1, by convention;
//   - the tile starts at a 1024-byte aligned address.
//
// Why one K step of 16 elements is "add 32 bytes to the start address": the descriptor's start
// address is the *unswizzled* address of the slice's first element. The hardware adds the row
// offsets to it (r * 128 within a group, g * SBO between groups) and only then applies the
// swizzle to the full computed address: address bits 4-6 (the chunk) are XORed with bits 7-9
// (the row within the group). For K slice s (bytes 32s .. 32s + 31 of each row, s = 0..3) the
// address of row r's two chunks is base + r * 128 + 32s + {0, 16}; bits 4-6 hold the chunk 2s or
// 2s + 1, and, because base is a multiple of 1024 and 32s + 16 < 128, bits 7-9 hold exactly
// r % 8. The XOR then lands on the chunk where TMA stored it. This is also why the tile must be
// 1024-byte aligned: with any other base, bits 7-9 of the address would no longer be r % 8 and
// wgmma would read the wrong chunks, with no error (a nonzero "base offset" field exists for
// such tiles; the course never needs it).

#include <cstdint>

#include "common/host_device.hpp"

namespace gemm {

// The swizzle mode, as the descriptor's layout-type field (bits 62-63) encodes it.
enum class SmemSwizzle : uint64_t { none = 0, swizzle_128b = 1, swizzle_64b = 2, swizzle_32b = 3 };

// matrix-descriptor-encode(x) of the PTX ISA: a byte address or offset as a 14-bit field.
GEMM_HOST_DEVICE constexpr uint64_t encode_descriptor_field(uint32_t bytes) {
  return (bytes & 0x3FFFFu) >> 4;
}

// A wgmma shared-memory descriptor from its parts, all in bytes. smem_byte_address is the
// shared-state-space address (gemm::ptx::shared_address on the device), a multiple of 16.
GEMM_HOST_DEVICE constexpr uint64_t make_smem_descriptor(uint32_t smem_byte_address,
                                                         uint32_t leading_byte_offset,
                                                         uint32_t stride_byte_offset,
                                                         SmemSwizzle swizzle) {
  return encode_descriptor_field(smem_byte_address) |          // bits 0-13
         encode_descriptor_field(leading_byte_offset) << 16 |  // bits 16-29
         encode_descriptor_field(stride_byte_offset) << 32 |   // bits 32-45
         static_cast<uint64_t>(swizzle) << 62;                 // bits 62-63; 49-51 stay 0
}

// The descriptor of the course's layout (above): a K-major tile with 128-byte rows, 128B swizzle,
// 8-row groups 1024 bytes apart, starting at a 1024-byte aligned address. For K slice s of the
// tile (K values 16s .. 16s + 15) pass smem_byte_address = tile + 32 * s.
GEMM_HOST_DEVICE constexpr uint64_t make_kmajor_sw128_descriptor(uint32_t smem_byte_address) {
  return make_smem_descriptor(smem_byte_address, /*leading_byte_offset=*/16,
                              /*stride_byte_offset=*/1024, SmemSwizzle::swizzle_128b);
}

// The descriptor of the same layout `bytes` further on in shared memory (a multiple of 16): the
// start address is a field of its own (bits 0-13, the address >> 4), so moving it is adding
// bytes >> 4 to the descriptor's low word, with no need to encode the address again. That costs one
// addition where make_kmajor_sw128_descriptor costs a mask, a shift and an OR, which counts in a
// loop that issues a descriptor for every wgmma. The field cannot overflow into the next one: a
// block's shared memory is below 2^18 bytes, the window that the field encodes.
GEMM_HOST_DEVICE constexpr uint64_t advance_descriptor(uint64_t descriptor, uint32_t bytes) {
  const uint32_t low_word = static_cast<uint32_t>(descriptor) + (bytes >> 4);
  return (descriptor & 0xFFFF'FFFF'0000'0000u) | low_word;
}

}  // namespace gemm
