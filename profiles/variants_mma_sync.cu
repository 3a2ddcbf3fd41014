// Variants of lessons 03-06 (profiles/variants.hpp).
#include "profiles/variants.hpp"

#include "lessons/03_tensor_cores/kernel.cuh"
#include "lessons/04_swizzled_smem/kernel.cuh"
#include "lessons/05_cp_async_pipeline/kernel.cuh"
#include "lessons/06_fragment_interleaving/kernel.cuh"
#include "lessons/registry.hpp"

namespace sweep {

std::vector<Variant> mma_sync_variants() {
  return {
      // Lessons 03 and 04: four warps of 64 x 64 (their default) against eight of 64 x 32.
      {"warp_tile_03", "lesson03 warp=64x64", true,
       with_launch<&lesson03::launch_tile<lesson03::TileShape<128, 128, 64, 64>>>(gemm::lessons::lesson03())},
      {"warp_tile_03", "lesson03 warp=64x32", false,
       with_launch<&lesson03::launch_tile<lesson03::TileShape<128, 128, 64, 32>>>(gemm::lessons::lesson03())},
      {"warp_tile_04", "lesson04 warp=64x64", true,
       with_launch<&lesson04::launch_tile<lesson04::TileShape<128, 128, 64, 64>>>(gemm::lessons::lesson04())},
      {"warp_tile_04", "lesson04 warp=64x32", false,
       with_launch<&lesson04::launch_tile<lesson04::TileShape<128, 128, 64, 32>>>(gemm::lessons::lesson04())},
      // Lesson 06's prefetch across the barrier needs 64 x 32 warp tiles (at 64 x 64 it spills):
      // lesson 05 at both warp tiles, lesson 06 at 64 x 32.
      {"interleave_05_06", "lesson05 warp=64x64", true,
       with_launch<&lesson05::launch_tile<lesson05::TileShape<128, 128, 64, 64, 3>>>(gemm::lessons::lesson05())},
      {"interleave_05_06", "lesson05 warp=64x32", false,
       with_launch<&lesson05::launch_tile<lesson05::TileShape<128, 128, 64, 32, 3>>>(gemm::lessons::lesson05())},
      {"interleave_05_06", "lesson06 warp=64x32", true,
       with_launch<&lesson06::launch_tile<lesson06::TileShape<128, 128, 64, 32, 3>>>(gemm::lessons::lesson06())},
  };
}

}  // namespace sweep
