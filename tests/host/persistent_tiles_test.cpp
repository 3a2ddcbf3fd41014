// Lesson 13's persistent scheduler (common/hopper/persistent_tiles.hpp): the clusters of a
// persistent grid together compute every cluster tile once, each block its own tile row.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/gemm.hpp"
#include "common/hopper/persistent_tiles.hpp"
#include "common/hopper/tile_shape.hpp"

namespace {

TEST(PersistentClusterTiles, EveryTileOfDOnceInTheGroupedOrder) {
  using Tile = gemm::hopper::TileShape<128, 256, 4, 2, 2>;
  struct Problem {
    int64_t m, n, clusters;
    int group;
  };
  for (const Problem& problem : {Problem{4096, 4096, 66, 8}, Problem{4096, 14336, 66, 8},
                                 Problem{333, 136, 3, 8}, Problem{1000, 2000, 7, 1},
                                 Problem{8192, 1024, 66, 16}}) {
    const int64_t cluster_rows = gemm::ceil_div<int64_t>(problem.m, 256);
    const int64_t tiles_n = gemm::ceil_div<int64_t>(problem.n, 256);
    std::vector<int> covered(size_t(cluster_rows * 2 * tiles_n), 0);
    for (int64_t cluster = 0; cluster < problem.clusters; ++cluster)
      for (uint32_t rank = 0; rank < 2; ++rank) {
        const gemm::taught::PersistentClusterTiles<Tile> tiles{
            cluster, problem.clusters, cluster_rows, tiles_n, problem.group, 64, rank};
        for (int64_t i = 0; i < tiles.count(); ++i) {
          const gemm::hopper::WorkItem item = tiles.item(i);
          ASSERT_EQ(item.k_begin, 0);
          ASSERT_EQ(item.k_end, 64);
          ASSERT_EQ(item.row0 / 128 % 2, int64_t(rank));
          ++covered[size_t(item.row0 / 128 * tiles_n + item.col0 / 256)];
        }
      }
    for (size_t tile = 0; tile < covered.size(); ++tile)
      ASSERT_EQ(covered[tile], 1) << problem.m << " x " << problem.n << ": tile " << tile;
  }
}

}  // namespace
