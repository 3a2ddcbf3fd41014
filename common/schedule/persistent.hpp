#pragma once
// Which output tiles each CTA of a persistent grid computes (lessons 11 on).
//
// A persistent grid launches about one CTA per SM, and each CTA loops over tiles instead of the
// hardware handing out one tile per CTA. CTA c of a grid of G CTAs takes the tiles
//
//   c, c + G, c + 2G, ...          (iteration i: tile i * G + c)
//
// so that at any moment the G CTAs work on G consecutive tiles, as a non-persistent grid's first
// wave would: neighbours in the order share rows of A and columns of B, which then come from L2.
// (Giving each CTA a consecutive run of tiles instead would spread the CTAs working at the same
// moment over the whole matrix, and L2 would hold none of what they share.)
//
// Tile numbers are int64_t: at the contract's largest shapes (2^30 x 2^30) there are 2^45 tiles.

#include <cstdint>

#include "common/host_device.hpp"

namespace gemm {

// The tile that `cta` computes in `iteration` (0, 1, 2, ...) of a grid of `grid` CTAs.
GEMM_HOST_DEVICE constexpr int64_t persistent_tile(int64_t cta, int64_t grid, int64_t iteration) {
  return iteration * grid + cta;
}

// How many tiles `cta` computes: the iterations whose tile is below `tiles`. CTAs beyond the
// tile count (a grid larger than the problem) compute none.
GEMM_HOST_DEVICE constexpr int64_t persistent_tile_count(int64_t cta, int64_t grid, int64_t tiles) {
  return cta < tiles ? (tiles - cta + grid - 1) / grid : 0;
}

// Ping-pong (lesson 11): the two consumer warpgroups of a CTA alternate its tiles; consumer
// `consumer` (0 or 1) takes the CTA's iterations consumer, consumer + 2, consumer + 4, ...
// How many that is, out of the CTA's `cta_tiles`.
GEMM_HOST_DEVICE constexpr int64_t pingpong_tile_count(int64_t cta_tiles, int consumer) {
  return cta_tiles > consumer ? (cta_tiles - consumer + 1) / 2 : 0;
}

// A tile number as a (row, column) of tiles, in row-major order: tiles_n tiles per row.
struct TileCoordinates {
  int64_t m = 0;  // which BlockM rows of D
  int64_t n = 0;  // which BlockN columns of D
};
GEMM_HOST_DEVICE constexpr TileCoordinates row_major_tile(int64_t tile, int64_t tiles_n) {
  return {tile / tiles_n, tile % tiles_n};
}

}  // namespace gemm
