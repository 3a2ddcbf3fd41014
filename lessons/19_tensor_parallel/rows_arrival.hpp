#pragma once
// NEW in lesson 19: where the rows of the first GEMM's A arrive, and which of them a tile waits for
// (arriving_rows_gemm.cuh). Plain host and device code, which the host tests check without a GPU.

#include <cstdint>

#include "common/host_device.hpp"

namespace lesson19 {

// Where the rows of A arrive: in blocks of `block_rows` rows (a chunk of one rank's rows), of which
// the first `local_blocks` are this rank's own, in place before the launch; block b of the others
// has landed once landed[b] holds `epoch` or a later layer's.
struct RowsArrival {
  const uint32_t* landed = nullptr;
  uint32_t epoch = 0;
  int block_rows = 1;
  int local_blocks = 0;
  int blocks = 0;  // every rank's: G c
};

// The blocks a tile's rows [row0, row0 + rows) of A must wait for: from `first` to `last`
// (none when first > last). The rank's own blocks wait for nothing, and rows past A's last block
// (a ragged last tile) belong to no block.
struct BlocksToWaitFor {
  int first, last;
};
GEMM_HOST_DEVICE inline BlocksToWaitFor blocks_to_wait_for(const RowsArrival& arrival, int row0,
                                                           int rows) {
  const int first = row0 / arrival.block_rows;
  const int last = (row0 + rows - 1) / arrival.block_rows;
  return {first > arrival.local_blocks ? first : arrival.local_blocks,
          last < arrival.blocks - 1 ? last : arrival.blocks - 1};
}

}  // namespace lesson19
