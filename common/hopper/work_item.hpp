#pragma once
// A work item of a persistent block (lessons 13-15): which tile of D, which of its slices, and,
// for Stream-K, which part of the tile. The producer posts them to the consumers through the
// work queue (common/hopper/work_queue.hpp); the schedulers make them (common/hopper/
// persistent_tiles.hpp, stream_k_workspace.hpp).

#include <cstdint>

#include "common/host_device.hpp"

namespace gemm::hopper {

struct WorkItem {
  int row0 = 0, col0 = 0;      // this block's tile of D
  int k_begin = 0, k_end = 0;  // the tile's slices this item computes; none: the end of the work
  // Stream-K (lesson 14): part `unit` of the tile's `units` parts, in k order, and this block's
  // workspace slot for a tile cut into parts. A whole tile is part 0 of 1.
  int unit = 0, units = 1;
  int64_t slot = 0;

  GEMM_HOST_DEVICE constexpr bool is_end() const { return k_begin == k_end; }
  // Whether this item stores its tile: a whole tile, or the last part of a cut one (lesson 14's
  // fixup hands that part the others' sums).
  GEMM_HOST_DEVICE constexpr bool stores_tile() const { return unit == units - 1; }
};

}  // namespace gemm::hopper
