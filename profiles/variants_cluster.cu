// Variants of lessons 12-14 (profiles/variants.hpp).
#include "profiles/variants.hpp"

#include "lessons/13_persistent_raster/kernel.cuh"
#include "lessons/14_stream_k/kernel.cuh"
#include "lessons/registry.hpp"

namespace sweep {
namespace {

using Tile13 = lesson13::DefaultTile;
using Tile14 = lesson14::DefaultTile;

}  // namespace

std::vector<Variant> cluster_variants() {
  return {
      // Lesson 13: the width of the grouped order's bands (1: row-major order).
      {"raster_13", "lesson13 group=1", false,
       with_launch<&lesson13::launch_tile<Tile13, 1>>(gemm::lessons::lesson13())},
      {"raster_13", "lesson13 group=2", false,
       with_launch<&lesson13::launch_tile<Tile13, 2>>(gemm::lessons::lesson13())},
      {"raster_13", "lesson13 group=4", false,
       with_launch<&lesson13::launch_tile<Tile13, 4>>(gemm::lessons::lesson13())},
      {"raster_13", "lesson13 group=8", true,
       with_launch<&lesson13::launch_tile<Tile13, 8>>(gemm::lessons::lesson13())},
      {"raster_13", "lesson13 group=16", false,
       with_launch<&lesson13::launch_tile<Tile13, 16>>(gemm::lessons::lesson13())},
      // Lesson 13: the grid: every cluster that fits (66 on an H100 SXM) against 64 (128 blocks).
      {"grid_13", "lesson13 clusters=all", true,
       with_launch<&lesson13::launch_tile<Tile13, 8>>(gemm::lessons::lesson13())},
      {"grid_13", "lesson13 clusters=64", false,
       with_launch<&lesson13::launch_tile<Tile13, 8, 64>>(gemm::lessons::lesson13())},
      // Lesson 14: a cluster's Stream-K parts from its last tile to its first, or the other way.
      {"order_14", "lesson14 parts=last-to-first", true,
       with_launch<&lesson14::launch_tile<Tile14, 8, true>, &lesson14::workspace_bytes,
                   &lesson14::workspace_flag_bytes>(gemm::lessons::lesson14())},
      {"order_14", "lesson14 parts=first-to-last", false,
       with_launch<&lesson14::launch_tile<Tile14, 8, false>,
                   &lesson14::workspace_bytes_tile<Tile14, false>,
                   &lesson14::workspace_flag_bytes>(gemm::lessons::lesson14())},
  };
}

}  // namespace sweep
