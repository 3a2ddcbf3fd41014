#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/schedule/persistent.hpp"

namespace {

// Every tile of the problem, visited through the schedule: how often each one is computed.
std::vector<int> visits(int64_t tiles, int64_t grid) {
  std::vector<int> count(size_t(tiles), 0);
  for (int64_t cta = 0; cta < grid; ++cta)
    for (int64_t i = 0; i < gemm::persistent_tile_count(cta, grid, tiles); ++i) {
      const int64_t tile = gemm::persistent_tile(cta, grid, i);
      EXPECT_GE(tile, 0);
      EXPECT_LT(tile, tiles) << "cta " << cta << " iteration " << i;
      if (tile >= 0 && tile < tiles) ++count[size_t(tile)];
    }
  return count;
}

}  // namespace

TEST(PersistentSchedule, EveryTileExactlyOnce) {
  for (int64_t tiles : {1, 2, 7, 131, 132, 133, 264, 512, 561, 1000})
    for (int64_t grid : {1, 2, 3, 66, 128, 132, 200, 1500}) {
      const std::vector<int> count = visits(tiles, grid);
      for (int64_t tile = 0; tile < tiles; ++tile)
        EXPECT_EQ(count[size_t(tile)], 1) << tiles << " tiles, grid " << grid << ", tile " << tile;
    }
}

TEST(PersistentSchedule, GridLargerThanTheProblemLeavesCtasIdle) {
  EXPECT_EQ(gemm::persistent_tile_count(0, 132, 5), 1);
  EXPECT_EQ(gemm::persistent_tile_count(4, 132, 5), 1);
  EXPECT_EQ(gemm::persistent_tile_count(5, 132, 5), 0);
  EXPECT_EQ(gemm::persistent_tile_count(131, 132, 5), 0);
}

TEST(PersistentSchedule, CtasWorkingAtTheSameTimeTakeConsecutiveTiles) {
  // Iteration i of all CTAs together covers tiles i * grid .. i * grid + grid - 1: neighbours.
  for (int64_t cta = 0; cta < 132; ++cta) EXPECT_EQ(gemm::persistent_tile(cta, 132, 3), 396 + cta);
}

TEST(PersistentSchedule, NoOverflowAtTheLargestShapes) {
  // 2^30 x 2^30 with 128 x 256 tiles: 2^23 x 2^22 = 2^45 tiles.
  const int64_t tiles = (int64_t(1) << 23) * (int64_t(1) << 22);
  const int64_t grid = 132;
  const int64_t last_cta = (tiles - 1) % grid;
  const int64_t count = gemm::persistent_tile_count(last_cta, grid, tiles);
  EXPECT_EQ(gemm::persistent_tile(last_cta, grid, count - 1), tiles - 1);
  const gemm::TileCoordinates last = gemm::row_major_tile(tiles - 1, int64_t(1) << 22);
  EXPECT_EQ(last.m, (int64_t(1) << 23) - 1);
  EXPECT_EQ(last.n, (int64_t(1) << 22) - 1);
}

TEST(PingPongSchedule, TheTwoConsumersSplitEveryCtasTilesExactly) {
  for (int64_t tiles : {1, 2, 3, 131, 133, 264, 265, 561})
    for (int64_t grid : {1, 2, 66, 132, 500}) {
      std::vector<int> count(size_t(tiles), 0);
      for (int64_t cta = 0; cta < grid; ++cta) {
        const int64_t cta_tiles = gemm::persistent_tile_count(cta, grid, tiles);
        EXPECT_EQ(gemm::pingpong_tile_count(cta_tiles, 0) + gemm::pingpong_tile_count(cta_tiles, 1),
                  cta_tiles);
        // Consumer 0 never has fewer tiles than consumer 1, and at most one more.
        EXPECT_GE(gemm::pingpong_tile_count(cta_tiles, 0), gemm::pingpong_tile_count(cta_tiles, 1));
        EXPECT_LE(gemm::pingpong_tile_count(cta_tiles, 0), gemm::pingpong_tile_count(cta_tiles, 1) + 1);
        for (int consumer = 0; consumer < 2; ++consumer)
          for (int64_t j = 0; j < gemm::pingpong_tile_count(cta_tiles, consumer); ++j) {
            // The consumer's j-th tile is the CTA's iteration consumer + 2j.
            const int64_t tile = gemm::persistent_tile(cta, grid, consumer + 2 * j);
            ASSERT_LT(tile, tiles);
            ++count[size_t(tile)];
          }
      }
      for (int64_t tile = 0; tile < tiles; ++tile)
        EXPECT_EQ(count[size_t(tile)], 1) << tiles << " tiles, grid " << grid << ", tile " << tile;
    }
}

TEST(TileCoordinates, RowMajor) {
  EXPECT_EQ(gemm::row_major_tile(0, 16).m, 0);
  EXPECT_EQ(gemm::row_major_tile(17, 16).m, 1);
  EXPECT_EQ(gemm::row_major_tile(17, 16).n, 1);
  EXPECT_EQ(gemm::row_major_tile(15, 16).n, 15);
}
