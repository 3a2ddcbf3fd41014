// Host check swizzle_bank_conflicts: the shared-memory layout function of a submission,
// graded::tile_offset(row, column), for a tile of 128 rows of 64 bf16 (lessons 04-06).
//
// An unswizzled layout computes the right product too, only slower, so correctness runs cannot
// tell it from the swizzle: this check can. It simulates shared memory's 32 banks of 4 bytes and
// counts the passes (the most distinct words any bank is asked for) of the accesses the kernel
// makes: each ldmatrix phase reads one 16-byte chunk from each of 8 consecutive rows, and each
// quarter-warp of the loader stores the 8 chunks of one row. Every one must take one pass, and
// the layout must stay a layout: every element of the tile at its own offset, inside the tile,
// the 8 elements of a 16-byte chunk together and in order (16-byte loads and ldmatrix need that).
//
// The grader compiles it after the submission's kernel.cuh and `namespace graded = ...;`
// (build.py); it returns 0 when the layout passes, 1 otherwise, and prints what it found.
#include <cstdio>
#include <set>
#include <vector>

namespace swizzle_check {

constexpr int kRows = 128, kColumns = 64, kChunk = 8, kBanks = 32;

// Passes shared memory needs to serve these 16-byte accesses together.
int passes(const std::vector<int>& element_offsets) {
  std::vector<std::set<int>> words(kBanks);
  for (int offset : element_offsets) {
    const int first_word = offset * 2 / 4;  // bf16: 2 bytes per element
    for (int word = first_word; word < first_word + 4; ++word) words[word % kBanks].insert(word);
  }
  size_t most = 0;
  for (const auto& bank : words) most = bank.size() > most ? bank.size() : most;
  return int(most);
}

int run() {
  int failures = 0;
  const auto fail = [&](const char* what, int row, int column, int value) {
    if (failures++ < 10) std::printf("FAIL %s (row %d, column %d: %d)\n", what, row, column, value);
  };

  std::set<int> seen;
  for (int row = 0; row < kRows; ++row)
    for (int column = 0; column < kColumns; ++column) {
      const int offset = graded::tile_offset(row, column);
      if (offset < 0 || offset >= kRows * kColumns) fail("offset outside the tile", row, column, offset);
      if (!seen.insert(offset).second) fail("two elements at one offset", row, column, offset);
      const int chunk_start = graded::tile_offset(row, column - column % kChunk);
      if (chunk_start % kChunk != 0) fail("a 16-byte chunk that is not 16-byte aligned", row, column, chunk_start);
      if (offset != chunk_start + column % kChunk) fail("a 16-byte chunk split or reordered", row, column, offset);
    }
  if (failures) return failures;

  for (int row0 = 0; row0 < kRows; row0 += 8)
    for (int chunk = 0; chunk < kColumns / kChunk; ++chunk) {
      std::vector<int> phase;  // one ldmatrix phase: the same chunk of 8 consecutive rows
      for (int row = row0; row < row0 + 8; ++row) phase.push_back(graded::tile_offset(row, chunk * kChunk));
      const int needed = passes(phase);
      if (needed != 1) fail("bank conflict in an ldmatrix phase (expected 1 pass), passes it takes", row0, chunk * kChunk, needed);
    }
  for (int row = 0; row < kRows; ++row) {
    std::vector<int> stores;  // a quarter-warp of the loader: the 8 chunks of one row
    for (int chunk = 0; chunk < kColumns / kChunk; ++chunk) stores.push_back(graded::tile_offset(row, chunk * kChunk));
    const int needed = passes(stores);
    if (needed != 1) fail("bank conflict in the loader's row stores (expected 1 pass), passes they take", row, 0, needed);
  }
  return failures;
}

}  // namespace swizzle_check

int main() {
  const int failures = swizzle_check::run();
  if (failures) {
    std::printf("%d problem(s) with the shared-memory layout\n", failures);
    return 1;
  }
  std::printf("PASS: a layout of the 128 x 64 tile, every ldmatrix phase and every row store in one pass\n");
  return 0;
}
