#pragma once
// Where a block's tile lies when clusters of kClusterM blocks along M share a column of B tiles
// (lessons 12-15). The schedulers number cluster tiles: kClusterM tile rows by one tile column.
// Cluster tile (m, n) covers tile rows kClusterM * m .. kClusterM * m + kClusterM - 1 of tile
// column n, and the block of rank r takes tile row kClusterM * m + r. At a ragged M the last
// cluster tile's higher ranks may lie entirely below D: those blocks still load, multicast and
// compute (on TMA's zeros), since their partners need their share of B, and store nothing.
// Lesson 16's tiles may cluster along N instead (KernelTile::kClusterN): cluster tile (m, n) then
// covers tile columns kClusterN * n .. kClusterN * n + kClusterN - 1 of tile row m, the block of
// rank r taking column kClusterN * n + r, and at a ragged N the same holds of the last columns.

#include <cstdint>
#include <type_traits>

#include "common/host_device.hpp"
#include "common/schedule/persistent.hpp"  // TileCoordinates

namespace gemm::hopper {

// The first row and column of D of a block's tile.
struct TileOrigin {
  int row0 = 0, col0 = 0;
};

// The blocks of a cluster along N (lesson 16's KernelTile::kClusterN; lessons 12-15's tiles cluster
// along M only), and the blocks of a cluster.
template <class Tile, class = void>
inline constexpr int kClusterNOf = 1;
template <class Tile>
inline constexpr int kClusterNOf<Tile, std::void_t<decltype(Tile::kClusterN)>> = Tile::kClusterN;
template <class Tile>
inline constexpr int kClusterBlocksOf = Tile::kClusterM * kClusterNOf<Tile>;

template <class Tile>
GEMM_HOST_DEVICE constexpr TileOrigin cluster_tile_origin(TileCoordinates cluster_tile,
                                                          uint32_t rank) {
  if constexpr (kClusterNOf<Tile> > 1)
    return {int(cluster_tile.m * Tile::kBlockM),
            int((cluster_tile.n * kClusterNOf<Tile> + rank) * Tile::kBlockN)};
  return {int((cluster_tile.m * Tile::kClusterM + rank) * Tile::kBlockM),
          int(cluster_tile.n * Tile::kBlockN)};
}

}  // namespace gemm::hopper
