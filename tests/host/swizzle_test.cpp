#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>
#include <vector>

#include "common/swizzle.hpp"

using gemm::swizzle_chunk;
using gemm::swizzled_offset;

namespace {

constexpr int kRowBytes = 128;

// Byte offset of (row, logical chunk) in a tile of 128-byte rows, plain or swizzled.
int chunk_byte_offset(int row, int chunk, bool swizzled) {
  return row * kRowBytes + (swizzled ? swizzle_chunk(row, chunk) : chunk) * 16;
}

// How many passes shared memory needs to serve 8 16-byte accesses issued together (one ldmatrix
// phase, or one quarter-warp of 16-byte stores). Shared memory has 32 banks of 4 bytes; a 16-byte
// access touches 4 consecutive banks. Accesses to different addresses in the same bank are
// serialized, so the number of passes is the largest number of distinct 4-byte words any bank
// is asked for.
int passes_for(const std::vector<int>& byte_offsets) {
  std::array<std::set<int>, 32> words_per_bank;
  for (int offset : byte_offsets)
    for (int word = offset / 4; word < offset / 4 + 4; ++word) words_per_bank[word % 32].insert(word);
  size_t passes = 0;
  for (const auto& words : words_per_bank) passes = std::max(passes, words.size());
  return int(passes);
}

// One ldmatrix phase: 8 lanes give the addresses of logical chunk `chunk` in rows row0..row0+7.
std::vector<int> ldmatrix_phase(int row0, int chunk, bool swizzled) {
  std::vector<int> offsets;
  for (int lane = 0; lane < 8; ++lane) offsets.push_back(chunk_byte_offset(row0 + lane, chunk, swizzled));
  return offsets;
}

}  // namespace

TEST(Swizzle, IsABijectionOnTheTile) {
  // Every (row, column) of a 128 x 64 tile maps to a different offset inside the tile.
  std::set<int> offsets;
  for (int row = 0; row < 128; ++row)
    for (int column = 0; column < 64; ++column) {
      const int offset = swizzled_offset(row, column);
      EXPECT_GE(offset, row * 64);  // stays in its own row
      EXPECT_LT(offset, (row + 1) * 64);
      offsets.insert(offset);
    }
  EXPECT_EQ(offsets.size(), 128u * 64u);
}

TEST(Swizzle, KeepsTheEightElementsOfAChunkTogether) {
  // A 16-byte chunk stays contiguous, so 16-byte loads and ldmatrix rows still work.
  for (int row = 0; row < 16; ++row)
    for (int column = 0; column < 64; column += 8)
      for (int i = 1; i < 8; ++i)
        EXPECT_EQ(swizzled_offset(row, column + i), swizzled_offset(row, column) + i);
}

TEST(Swizzle, WorkedExamples) {
  EXPECT_EQ(swizzle_chunk(0, 5), 5);  // row 0: unchanged
  EXPECT_EQ(swizzle_chunk(3, 5), 6);  // 0b101 ^ 0b011 = 0b110
  EXPECT_EQ(swizzle_chunk(9, 0), 1);  // row 9 behaves like row 1
  EXPECT_EQ(swizzled_offset(3, 42), 3 * 64 + (5 ^ 3) * 8 + 2);
}

TEST(BankSimulation, PlainLayoutGivesEightWayConflictsForLdmatrix) {
  for (int chunk = 0; chunk < 8; ++chunk)
    EXPECT_EQ(passes_for(ldmatrix_phase(/*row0=*/16, chunk, /*swizzled=*/false)), 8) << chunk;
}

TEST(BankSimulation, SwizzledLayoutIsConflictFreeForLdmatrix) {
  for (int row0 = 0; row0 < 128; row0 += 8)
    for (int chunk = 0; chunk < 8; ++chunk)
      EXPECT_EQ(passes_for(ldmatrix_phase(row0, chunk, /*swizzled=*/true)), 1) << row0 << " " << chunk;
}

TEST(BankSimulation, RowStoresAreConflictFreeEitherWay) {
  // Filling the tile: 8 lanes store the 8 chunks of one row. A full 128-byte row covers all
  // banks once, whatever the order of its chunks.
  for (bool swizzled : {false, true}) {
    std::vector<int> offsets;
    for (int chunk = 0; chunk < 8; ++chunk) offsets.push_back(chunk_byte_offset(5, chunk, swizzled));
    EXPECT_EQ(passes_for(offsets), 1);
  }
}
