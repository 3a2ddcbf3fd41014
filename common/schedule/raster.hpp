#pragma once
// The order in which a persistent grid visits the tiles of D (lesson 13): grouped rasterization.
//
// Tiles computed at the same moment should share operands, so that L2 holds what they read. The
// hardware's order, and row-major order, walk along one row of tiles: 132 tiles of a 4096 x 14336
// problem with 128 x 256 tiles span 2.4 rows, so they read only 2.4 tiles' rows of A but nearly
// all of B (117 MB, more than the 50 MB of L2), and B is read from HBM again for every band.
// Grouped order walks a band of `group` tiles across the shorter dimension, then along the
// longer one, then the next band:
//
//   M shorter (tiles_m <= tiles_n): bands of `group` tile rows, visited column by column
//     index:  0  3  6  9 ...        (group = 3: the first three rows of tiles, column by column,
//             1  4  7 10 ...         then rows 3-5 the same way)
//             2  5  8 11 ...
//   N shorter: bands of `group` tile columns, visited row by row (the transpose).
//
// 132 consecutive tiles then form a block of about group x (132 / group) tiles: a few rows of A
// and a few columns of B, read once from HBM and shared through L2. group = 1 is row-major order
// (column-major when N is shorter). The last band is narrower when group does not divide the
// shorter dimension. All counts are int64_t: the contract allows 2^45 tiles.

#include <cstdint>

#include "common/host_device.hpp"
#include "common/schedule/persistent.hpp"  // TileCoordinates

namespace gemm {

GEMM_HOST_DEVICE constexpr TileCoordinates grouped_tile(int64_t index, int64_t tiles_m,
                                                        int64_t tiles_n, int64_t group) {
  // Work on (short, long) coordinates, then map back.
  const bool m_is_short = tiles_m <= tiles_n;
  const int64_t tiles_short = m_is_short ? tiles_m : tiles_n;
  const int64_t tiles_long = m_is_short ? tiles_n : tiles_m;
  const int64_t band = index / (group * tiles_long);
  const int64_t first_short = band * group;
  const int64_t band_width = tiles_short - first_short < group ? tiles_short - first_short : group;
  const int64_t within = index - first_short * tiles_long;
  const int64_t along_long = within / band_width;
  const int64_t along_short = first_short + within % band_width;
  return m_is_short ? TileCoordinates{along_short, along_long}
                    : TileCoordinates{along_long, along_short};
}

}  // namespace gemm
