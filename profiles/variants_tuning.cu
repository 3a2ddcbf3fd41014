// Lesson 15's configurations: the tuning grid behind its README (profiles/variants.hpp). Each
// variant is the plain product (the fused epilogue only changes the epilogue's arithmetic).
#include "profiles/variants.hpp"

#include "lessons/15_tma_store_epilogue/kernel.cuh"

namespace sweep {
namespace {

// Lesson 15 with tile shape <128, 256, Stages, Buffers> and raster group Group.
template <int Stages, int Buffers, int Group>
Variant tuning(const char* name, bool is_default) {
  using Tile = lesson15::TileShape<Stages, Buffers>;
  return {"tuning_15", name, is_default,
          with_launch(lesson15::kLesson, &lesson15::launch_kind<Tile, lesson15::PlainEpilogue, Group>,
                      &lesson15::workspace_bytes_tile<Tile>)};
}

}  // namespace

std::vector<Variant> tuning_variants() {
  return {
      tuning<4, 2, 8>("lesson15 stages=4 buffers=2 group=8", true),
      tuning<4, 1, 8>("lesson15 stages=4 buffers=1 group=8", false),
      tuning<3, 2, 8>("lesson15 stages=3 buffers=2 group=8", false),
      tuning<4, 2, 4>("lesson15 stages=4 buffers=2 group=4", false),
      tuning<4, 2, 16>("lesson15 stages=4 buffers=2 group=16", false),
  };
}

}  // namespace sweep
