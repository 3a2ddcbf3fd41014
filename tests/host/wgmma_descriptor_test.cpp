#include <gtest/gtest.h>

#include <cstdint>

#include "common/wgmma_descriptor.hpp"

using gemm::make_kmajor_sw128_descriptor;
using gemm::make_smem_descriptor;
using gemm::SmemSwizzle;

namespace {

// The fields of a descriptor, read back with the bit positions of the PTX ISA table.
uint64_t start_field(uint64_t d) { return d & 0x3FFF; }           // bits 0-13
uint64_t leading_field(uint64_t d) { return (d >> 16) & 0x3FFF; }  // bits 16-29
uint64_t stride_field(uint64_t d) { return (d >> 32) & 0x3FFF; }   // bits 32-45
uint64_t base_offset_field(uint64_t d) { return (d >> 49) & 0x7; } // bits 49-51
uint64_t layout_field(uint64_t d) { return d >> 62; }              // bits 62-63

}  // namespace

TEST(WgmmaDescriptor, StartAddressDropsItsFourZeroBits) {
  // 0x400 = 1024 bytes -> 1024 / 16 = 64 = 0x40 in bits 0-13, nothing else set.
  EXPECT_EQ(make_smem_descriptor(0x400, 0, 0, SmemSwizzle::none), 0x40u);
  // 0x10 -> 0x1; 0x12340 -> 0x1234.
  EXPECT_EQ(make_smem_descriptor(0x10, 0, 0, SmemSwizzle::none), 0x1u);
  EXPECT_EQ(make_smem_descriptor(0x12340, 0, 0, SmemSwizzle::none), 0x1234u);
}

TEST(WgmmaDescriptor, EachFieldAtItsPosition) {
  // LBO 0x80 = 128 bytes -> 0x8, shifted to bit 16: 0x8 << 16 = 0x80000.
  EXPECT_EQ(make_smem_descriptor(0, 0x80, 0, SmemSwizzle::none), 0x80000u);
  // SBO 0x400 = 1024 bytes -> 0x40, shifted to bit 32: 0x40'0000'0000.
  EXPECT_EQ(make_smem_descriptor(0, 0, 0x400, SmemSwizzle::none), 0x40'0000'0000u);
  // Layout types in bits 62-63: 128B = 1 -> 0x4000..., 64B = 2 -> 0x8000..., 32B = 3 -> 0xC000...
  EXPECT_EQ(make_smem_descriptor(0, 0, 0, SmemSwizzle::swizzle_128b), 0x4000'0000'0000'0000u);
  EXPECT_EQ(make_smem_descriptor(0, 0, 0, SmemSwizzle::swizzle_64b), 0x8000'0000'0000'0000u);
  EXPECT_EQ(make_smem_descriptor(0, 0, 0, SmemSwizzle::swizzle_32b), 0xC000'0000'0000'0000u);
}

TEST(WgmmaDescriptor, AllFieldsTogether) {
  // address 0x2A40 -> 0x2A4; LBO 0x100 -> 0x10 << 16 = 0x10'0000;
  // SBO 0x200 -> 0x20 << 32 = 0x20'0000'0000; 64B swizzle: 2 << 62 = 0x8000'0000'0000'0000.
  // Sum: 0x8000'0020'0010'02A4.
  EXPECT_EQ(make_smem_descriptor(0x2A40, 0x100, 0x200, SmemSwizzle::swizzle_64b),
            0x8000'0020'0010'02A4u);
}

TEST(WgmmaDescriptor, KMajor128BSwizzleTile) {
  // The course's layout at shared address 0x400 (1024-byte aligned):
  //   start 0x400 -> 0x40            bits 0-13:  0x0000'0000'0000'0040
  //   LBO 16 -> 1                    bit 16:     0x0000'0000'0001'0000
  //   SBO 1024 -> 64 = 0x40          bits 32-45: 0x0000'0040'0000'0000
  //   base offset 0                  bits 49-51: 0
  //   128B swizzle: 1                bits 62-63: 0x4000'0000'0000'0000
  const uint64_t d = make_kmajor_sw128_descriptor(0x400);
  EXPECT_EQ(d, 0x4000'0040'0001'0040u);
  EXPECT_EQ(start_field(d), 0x40u);
  EXPECT_EQ(leading_field(d), 1u);
  EXPECT_EQ(stride_field(d), 64u);
  EXPECT_EQ(base_offset_field(d), 0u);
  EXPECT_EQ(layout_field(d), 1u);
  EXPECT_EQ(d, make_smem_descriptor(0x400, 16, 1024, SmemSwizzle::swizzle_128b));

  // A tile at 0x1C000 (112 KiB, 1024-byte aligned): 0x1C000 >> 4 = 0x1C00.
  EXPECT_EQ(make_kmajor_sw128_descriptor(0x1C000), 0x4000'0040'0001'1C00u);
}

TEST(WgmmaDescriptor, FieldsDoNotBleedIntoEachOther) {
  // Largest encodable values: (0x3FFFF & x) >> 4 = 0x3FFF, 14 ones in each field.
  EXPECT_EQ(make_smem_descriptor(0x3FFF0, 0x3FFF0, 0x3FFF0, SmemSwizzle::swizzle_32b),
            0xC000'3FFF'3FFF'3FFFu);
  // All ones in one input at a time: only that field's 14 bits are set. Bits above 18 of the
  // byte value are dropped (matrix-descriptor-encode masks with 0x3FFFF), the low 4 as well.
  EXPECT_EQ(make_smem_descriptor(0xFFFFFFFF, 0, 0, SmemSwizzle::none), 0x3FFFu);
  EXPECT_EQ(make_smem_descriptor(0, 0xFFFFFFFF, 0, SmemSwizzle::none), 0x3FFF'0000u);
  EXPECT_EQ(make_smem_descriptor(0, 0, 0xFFFFFFFF, SmemSwizzle::none), 0x3FFF'0000'0000u);
  // Bits 14-15, 30-31, 46-61 (with the base offset 49-51) stay clear whatever the inputs.
  const uint64_t unused_bits = 0x3FFF'C000'C000'C000u;
  EXPECT_EQ(make_smem_descriptor(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, SmemSwizzle::swizzle_32b) &
                unused_bits,
            0u);
}

TEST(WgmmaDescriptor, KStepOf16ElementsAdds32BytesToTheStartAddress) {
  // One wgmma K slice is 16 bf16 = 32 bytes of each 128-byte row; 32 bytes encode as 32 >> 4 = 2.
  // Slices s = 0..3 of the tile at 0x2000: start field 0x200 + 2s, every other field unchanged.
  const uint32_t tile = 0x2000;
  const uint64_t slice0 = make_kmajor_sw128_descriptor(tile);
  for (uint32_t s = 0; s < 4; ++s) {
    const uint64_t slice = make_kmajor_sw128_descriptor(tile + 32 * s);
    EXPECT_EQ(slice, slice0 + 2 * s) << "slice " << s;
    EXPECT_EQ(start_field(slice), 0x200u + 2 * s);
    EXPECT_EQ(slice >> 14, slice0 >> 14) << "only the start address moves";
  }
}

TEST(WgmmaDescriptor, IsAConstantExpression) {
  static_assert(make_kmajor_sw128_descriptor(0x400) == 0x4000'0040'0001'0040u);
  static_assert(gemm::encode_descriptor_field(1024) == 64);
}

TEST(WgmmaDescriptor, AdvancingEqualsEncodingTheMovedAddress) {
  // Every 1024-byte aligned tile of a block's shared memory (at most 227 KB on sm_90), moved by
  // each k-step's 32 bytes and by whole 64-row blocks of 128-byte rows: adding to the descriptor
  // gives what encoding the moved address gives.
  for (uint32_t tile = 0; tile < 227 * 1024; tile += 1024)
    for (uint32_t bytes : {0u, 32u, 64u, 96u, 8192u, 8192u + 96u})
      EXPECT_EQ(gemm::advance_descriptor(make_kmajor_sw128_descriptor(tile), bytes),
                make_kmajor_sw128_descriptor(tile + bytes))
          << "tile " << tile << " + " << bytes;
}
