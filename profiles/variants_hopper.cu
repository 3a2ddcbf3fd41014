// Variants of lessons 07-11 (profiles/variants.hpp).
#include "profiles/variants.hpp"

#include "lessons/07_wgmma/kernel.cuh"
#include "lessons/08_tma_mbarrier/kernel.cuh"
#include "lessons/09_warp_specialization/kernel.cuh"
#include "lessons/10_cooperative/kernel.cuh"
#include "lessons/11_pingpong/kernel.cuh"
#include "lessons/registry.hpp"

namespace sweep {
namespace {

// Lesson 09's and 10's tiles with another stage count, lesson 11's with another tile or stages.
template <int Stages>
using Tile09 = gemm::hopper::TileShape<128, 128, Stages, /*Consumers=*/1>;
template <int Stages>
using Tile10 = gemm::hopper::TileShape<128, 256, Stages, /*Consumers=*/2>;
template <int BlockM, int BlockN, int Stages>
using Tile11 = gemm::hopper::TileShape<BlockM, BlockN, Stages, /*Consumers=*/1>;
using Default11 = lesson11::DefaultTile;

}  // namespace

std::vector<Variant> hopper_variants() {
  return {
      // Stage counts: only the ring's depth changes.
      {"stages_07", "lesson07 stages=2", false,
       with_launch<&lesson07::launch_tile<lesson07::TileShape<128, 128, 2>>>(gemm::lessons::lesson07())},
      {"stages_07", "lesson07 stages=3", true,
       with_launch<&lesson07::launch_tile<lesson07::TileShape<128, 128, 3>>>(gemm::lessons::lesson07())},
      {"stages_08", "lesson08 stages=2", true,
       with_launch<&lesson08::launch_tile<lesson08::TileShape<128, 128, 2>>>(gemm::lessons::lesson08())},
      {"stages_08", "lesson08 stages=3", false,
       with_launch<&lesson08::launch_tile<lesson08::TileShape<128, 128, 3>>>(gemm::lessons::lesson08())},
      {"stages_08", "lesson08 stages=4", false,
       with_launch<&lesson08::launch_tile<lesson08::TileShape<128, 128, 4>>>(gemm::lessons::lesson08())},
      {"stages_09", "lesson09 stages=2", false,
       with_launch<&lesson09::launch_tile<Tile09<2>>>(gemm::lessons::lesson09())},
      {"stages_09", "lesson09 stages=3", false,
       with_launch<&lesson09::launch_tile<Tile09<3>>>(gemm::lessons::lesson09())},
      {"stages_09", "lesson09 stages=4", true,
       with_launch<&lesson09::launch_tile<Tile09<4>>>(gemm::lessons::lesson09())},
      {"stages_09", "lesson09 stages=5", false,
       with_launch<&lesson09::launch_tile<Tile09<5>>>(gemm::lessons::lesson09())},
      {"stages_10", "lesson10 stages=3", false,
       with_launch<&lesson10::launch_tile<Tile10<3>>>(gemm::lessons::lesson10())},
      {"stages_10", "lesson10 stages=4", true,
       with_launch<&lesson10::launch_tile<Tile10<4>>>(gemm::lessons::lesson10())},
      // Lesson 11: one consumer's tile, 128 x 128 (two m64n128 per k-step) or 64 x 256 (one
      // m64n256), with as many stages as fit.
      {"tiles_11", "lesson11 tile=128x128 stages=6", true,
       with_launch<&lesson11::launch_tile<Tile11<128, 128, 6>>>(gemm::lessons::lesson11())},
      {"tiles_11", "lesson11 tile=128x128 stages=5", false,
       with_launch<&lesson11::launch_tile<Tile11<128, 128, 5>>>(gemm::lessons::lesson11())},
      {"tiles_11", "lesson11 tile=64x256 stages=5", false,
       with_launch<&lesson11::launch_tile<Tile11<64, 256, 5>>>(gemm::lessons::lesson11())},
      {"tiles_11", "lesson11 tile=64x256 stages=4", false,
       with_launch<&lesson11::launch_tile<Tile11<64, 256, 4>>>(gemm::lessons::lesson11())},
      // Lesson 11: the order of the tiles, the grouped order's band width (1: row-major).
      {"raster_11", "lesson11 group=1", false,
       with_launch<&lesson11::launch_tile<Default11, 1>>(gemm::lessons::lesson11())},
      {"raster_11", "lesson11 group=8", true,
       with_launch<&lesson11::launch_tile<Default11, 8>>(gemm::lessons::lesson11())},
      {"raster_11", "lesson11 group=16", false,
       with_launch<&lesson11::launch_tile<Default11, 16>>(gemm::lessons::lesson11())},
  };
}

}  // namespace sweep
