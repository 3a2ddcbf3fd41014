#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/schedule/raster.hpp"

namespace {

// Whether grouped_tile visits every tile of a tiles_m x tiles_n grid exactly once.
void expect_bijection(int64_t tiles_m, int64_t tiles_n, int64_t group) {
  std::vector<int> seen(size_t(tiles_m * tiles_n), 0);
  for (int64_t index = 0; index < tiles_m * tiles_n; ++index) {
    const gemm::TileCoordinates tile = gemm::grouped_tile(index, tiles_m, tiles_n, group);
    ASSERT_GE(tile.m, 0);
    ASSERT_LT(tile.m, tiles_m) << tiles_m << "x" << tiles_n << " group " << group << " index " << index;
    ASSERT_GE(tile.n, 0);
    ASSERT_LT(tile.n, tiles_n) << tiles_m << "x" << tiles_n << " group " << group << " index " << index;
    ++seen[size_t(tile.m * tiles_n + tile.n)];
  }
  for (int count : seen) ASSERT_EQ(count, 1) << tiles_m << "x" << tiles_n << " group " << group;
}

}  // namespace

TEST(GroupedRaster, VisitsEveryTileExactlyOnce) {
  for (int64_t tiles_m : {1, 2, 3, 7, 16, 17, 33})
    for (int64_t tiles_n : {1, 2, 5, 16, 56})
      for (int64_t group : {1, 2, 4, 8, 16}) expect_bijection(tiles_m, tiles_n, group);
}

TEST(GroupedRaster, WalksABandColumnByColumnWhenMIsShorter) {
  // 5 x 8 tiles, group 2: rows 0-1 column by column, then rows 2-3, then row 4 alone.
  const int64_t expected[][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}};
  for (int index = 0; index < 5; ++index) {
    const gemm::TileCoordinates tile = gemm::grouped_tile(index, 5, 8, 2);
    EXPECT_EQ(tile.m, expected[index][0]) << index;
    EXPECT_EQ(tile.n, expected[index][1]) << index;
  }
  // The second band starts at row 2.
  EXPECT_EQ(gemm::grouped_tile(16, 5, 8, 2).m, 2);
  EXPECT_EQ(gemm::grouped_tile(16, 5, 8, 2).n, 0);
  // The last band is one row high: it walks along row 4.
  for (int64_t column = 0; column < 8; ++column) {
    EXPECT_EQ(gemm::grouped_tile(32 + column, 5, 8, 2).m, 4);
    EXPECT_EQ(gemm::grouped_tile(32 + column, 5, 8, 2).n, column);
  }
}

TEST(GroupedRaster, TransposesWhenNIsShorter) {
  for (int64_t index = 0; index < 40; ++index) {
    const gemm::TileCoordinates tall = gemm::grouped_tile(index, 8, 5, 2);
    const gemm::TileCoordinates wide = gemm::grouped_tile(index, 5, 8, 2);
    EXPECT_EQ(tall.m, wide.n);
    EXPECT_EQ(tall.n, wide.m);
  }
}

TEST(GroupedRaster, GroupOneIsRowMajor) {
  for (int64_t index = 0; index < 24; ++index) {
    EXPECT_EQ(gemm::grouped_tile(index, 4, 6, 1).m, index / 6);
    EXPECT_EQ(gemm::grouped_tile(index, 4, 6, 1).n, index % 6);
  }
}

TEST(GroupedRaster, ConsecutiveTilesFormACompactBlock) {
  // 132 consecutive tiles of a 16 x 56 grid with group 8 touch 8 rows and 17 columns of tiles,
  // against 3 rows and all 56 columns in row-major order.
  const auto extent = [](int64_t group) {
    int64_t rows = 0, columns = 0;
    std::vector<bool> row(16), column(56);
    for (int64_t index = 0; index < 132; ++index) {
      const gemm::TileCoordinates tile = gemm::grouped_tile(index, 16, 56, group);
      rows += !row[size_t(tile.m)];
      columns += !column[size_t(tile.n)];
      row[size_t(tile.m)] = column[size_t(tile.n)] = true;
    }
    return std::pair<int64_t, int64_t>(rows, columns);
  };
  EXPECT_EQ(extent(8), (std::pair<int64_t, int64_t>(8, 17)));
  EXPECT_EQ(extent(1), (std::pair<int64_t, int64_t>(3, 56)));
}

TEST(GroupedRaster, NoOverflowAtTheLargestShapes) {
  // 2^30 x 2^30 with 128 x 256 tiles: 2^23 x 2^22 tiles.
  const int64_t tiles_m = int64_t(1) << 23, tiles_n = int64_t(1) << 22;
  const gemm::TileCoordinates last = gemm::grouped_tile(tiles_m * tiles_n - 1, tiles_m, tiles_n, 16);
  EXPECT_EQ(last.m, tiles_m - 1);
  EXPECT_EQ(last.n, tiles_n - 1);
  const gemm::TileCoordinates middle = gemm::grouped_tile(tiles_m * tiles_n / 2, tiles_m, tiles_n, 16);
  EXPECT_GE(middle.m, 0);
  EXPECT_LT(middle.m, tiles_m);
}
