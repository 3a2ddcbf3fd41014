// Extra kernel configurations for `make resources` (lesson 06's register table): lessons 05 and 06
// compiled with the same tile shapes, so their registers and spills can be compared side by side.
// Built only in the resources build tree, where spills are reported instead of failing the build.
#include "lessons/05_cp_async_pipeline/kernel.cuh"
#include "lessons/06_fragment_interleaving/kernel.cuh"

namespace {

// Taking a kernel's address makes the compiler emit it; nothing here is ever launched.
template <int BlockM, int BlockN, int WarpM, int WarpN, int Stages>
struct Configuration {
  static constexpr auto lesson05_kernel =
      &lesson05::gemm_kernel<lesson05::TileShape<BlockM, BlockN, WarpM, WarpN, Stages>>;
  static constexpr auto lesson06_kernel =
      &lesson06::gemm_kernel<lesson06::TileShape<BlockM, BlockN, WarpM, WarpN, Stages>>;
};

}  // namespace

// Block tile, warp tile, stages. Lesson 05 runs <128, 128, 64, 64, 3>,
// lesson 06 <128, 128, 64, 32, 3>.
template struct Configuration<128, 128, 64, 32, 3>;
template struct Configuration<128, 128, 32, 32, 3>;
template struct Configuration<128, 128, 64, 64, 3>;
template struct Configuration<128, 256, 64, 64, 3>;
template struct Configuration<256, 128, 128, 32, 3>;
