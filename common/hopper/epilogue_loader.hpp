#pragma once
/// The fused epilogue's loader (lesson 15): C and the bias by TMA, ahead of the epilogue, from one
/// thread of the producer warpgroup.
///
/// The producer posts the loader every work item of the block (post), in the order it posts them
/// to the consumers. For each item that stores its tile (a whole tile, or the last part of a cut
/// one), in the order the consumers store them, the loader
///   - loads the bias of the tile's BlockN columns into the next bias slice: a ring of kBiasSlices
///     that the block's stored tiles take in turn. full: the slice has landed; empty: every math
///     warpgroup that stores the tile is done with it;
///   - for each math warpgroup that stores the tile (both cooperative ones, each its rows; the one
///     ping-pong warpgroup whose turn it is, all the rows), loads C subtile by subtile into the
///     very buffers in which the warpgroup then stages D: a ring per warpgroup, one slot per
///     subtile buffer, that its stored tiles take in turn. full: the subtile's C has landed; empty:
///     the TMA store that last read the buffer is done with it (the epilogue's storing thread
///     releases it).
/// The first slots are free while the tile's main loop runs, so their C is there before the
/// epilogue starts; the later ones free up during the epilogue, and their loads then find C in L2,
/// where the loader prefetched the whole tile's C first.
///
/// The consumers and the loader each count the tiles stored so far, and that count is all they
/// keep of these rings from tile to tile (first_c_slot, bias_slice): the consumers have no
/// register to spare for more through their main loop.

#include <cstdint>

#include <cuda.h>

#include "common/gemm.hpp"
#include "common/hopper/pipeline.hpp"
#include "common/hopper/work_item.hpp"
#include "common/hopper/work_queue.hpp"
#include "common/ptx/tma.hpp"
#include "common/schedule/pipeline_state.hpp"

namespace gemm::hopper {

template <class Tile>
struct EpilogueLoader {
  // The producer warpgroup's thread that loads (the first of its second warp: thread 0 loads A
  // and B); the work items it may be behind the producer; the tiles' bias slices in flight.
  static constexpr int kThread = 32;
  static constexpr int kQueueDepth = 4;
  static constexpr int kBiasSlices = 2;
  static constexpr uint32_t kSubtileBytes =
      Tile::kSubtileRows * Tile::kSubtileColumns * uint32_t(sizeof(bf16));
  static constexpr uint32_t kBiasBytes = Tile::kBlockN * uint32_t(sizeof(bf16));
  // A bias slice's place in shared memory: whole 128-byte lines, the alignment a TMA destination
  // needs, so that the second slice of a 160-wide tile starts at 384 bytes, not at 320.
  static constexpr int kBiasSliceColumns = (Tile::kBlockN + 63) / 64 * 64;
  using Slot = PipelineState<Tile::kEpilogueBuffers>;
  using BiasSlice = PipelineState<kBiasSlices>;
  // The subtile buffers of the epilogue, which the loader fills with C.
  using Buffers = bf16[Tile::kMathWarpgroups][Tile::kEpilogueBuffers]
                      [Tile::kSubtileRows * Tile::kSubtileColumns];

  struct SharedStorage {
    WorkQueue<kQueueDepth> queue;
    TmaPipeline<Tile::kEpilogueBuffers> c_slots[Tile::kMathWarpgroups];
    TmaPipeline<kBiasSlices> bias_slots;
    alignas(128) bf16 bias[kBiasSlices][kBiasSliceColumns];
  };

  // Where a ring stands after `stored` tiles: each tile takes kRowBlocks x kSubtiles C slots of a
  // warpgroup that stores it, and one bias slice.
  GEMM_HOST_DEVICE static constexpr Slot first_c_slot(int stored, Slot start) {
    return start.advanced(stored * Tile::kRowBlocks * Tile::kSubtiles);
  }
  GEMM_HOST_DEVICE static constexpr BiasSlice bias_slice(int stored, BiasSlice start) {
    return start.advanced(stored);
  }

#if defined(__CUDACC__)
  // The thread that sets up the kernel's barriers, before the pipeline's (whose
  // fence.mbarrier_init makes every earlier init of the thread visible to the async proxy). The
  // queue has one receiving thread; a C slot is released by its warpgroup's storing thread, a
  // bias slice by the storing thread of each warpgroup that shares the tile (Tile::kConsumers).
  __device__ static void init(SharedStorage& shared) {
    shared.queue.init(/*consumer_warps=*/1);
    for (auto& slots : shared.c_slots) slots.init_barriers(/*consumer_warps=*/1);
    shared.bias_slots.init_barriers(/*consumer_warps=*/Tile::kConsumers);
  }

  // The producer's post of its position-th work item (or of the end of the work). The state
  // follows from the position: the producer has no register to spare for another one.
  __device__ static void post(SharedStorage& shared, int64_t position, const WorkItem& item) {
    shared.queue.post_at(position, item);
  }

  // The loader thread's whole work. It receives every item, also when there is nothing to load,
  // so that the producer never waits for it.
  __device__ static void load(SharedStorage& shared, Buffers& buffers, const CUtensorMap& c_map,
                              const CUtensorMap& bias_map, bool with_c, bool with_bias) {
    if (with_c) ptx::prefetch_tensor_map(&c_map);
    if (with_bias) ptx::prefetch_tensor_map(&bias_map);
    auto receive_state = PipelineState<kQueueDepth>::consumer_start();
    // The tiles stored so far by the block, and (ping-pong) by each warpgroup: a cooperative tile
    // is stored by every warpgroup, so their rings all stand where the block's count says.
    int stored_by_block = 0, stored_by_even = 0, stored_by_odd = 0;
    for (int64_t position = 0;; ++position) {
      const WorkItem item = shared.queue.receive_alone(receive_state);
      if (item.is_end()) break;
      if (!item.stores_tile()) continue;
      if (with_bias) {
        // Wait until every warpgroup that stored the slice's last tile is done with it.
        const BiasSlice slice = bias_slice(stored_by_block, BiasSlice::producer_start());
        shared.bias_slots.producer_acquire(slice, kBiasBytes);
        ptx::tma_load_2d(shared.bias[slice.index], &bias_map,
                         shared.bias_slots.full_barrier(slice), item.col0, 0);
      }
      int stored_by_warpgroup = stored_by_block++;
      if (Tile::kPingPong) stored_by_warpgroup = position % 2 == 0 ? stored_by_even++ : stored_by_odd++;
      if (!with_c) continue;
      // Where this tile starts in the ring of each warpgroup that stores it (the same place in all).
      Slot slot = first_c_slot(stored_by_warpgroup, Slot::producer_start());
      // (Loops kept as loops: one thread issuing a few copies per tile, under the producer
      // warpgroup's register budget, needs no unrolling.)
#pragma unroll 1
      for (int row = 0; row < Tile::kBlockM; row += Tile::kSubtileRows)
#pragma unroll 1
        for (int column = 0; column < Tile::kBlockN; column += Tile::kSubtileColumns)
          ptx::tma_prefetch_2d_l2(&c_map, item.col0 + column, item.row0 + row);
      // Subtile by subtile, the storing warpgroups in turn: each warpgroup's first subtiles come
      // first, as its epilogue needs them. Wait until the warpgroup's storing thread has released
      // the slot (its last store is done reading it), and announce the subtile's bytes.
#pragma unroll 1
      for (int r = 0; r < Tile::kRowBlocks; ++r)
#pragma unroll 1
        for (int subtile = 0; subtile < Tile::kSubtiles; ++subtile) {
#pragma unroll 1
          for (int w = 0; w < Tile::kMathWarpgroups; ++w) {
            if (!Tile::computes(w, position)) continue;
            auto& slots = shared.c_slots[w];
            slots.producer_acquire(slot, kSubtileBytes);
            const int row = item.row0 + Tile::first_row(w) + r * Tile::kWarpgroupM;
            ptx::tma_load_2d(buffers[w][slot.index], &c_map, slots.full_barrier(slot),
                             item.col0 + subtile * Tile::kSubtileColumns, row);
          }
          slot.advance();
        }
    }
  }
#endif
};

}  // namespace gemm::hopper
