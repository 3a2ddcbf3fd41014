#pragma once
/// The final kernel's math warpgroups (common/hopper/gemm_kernel.cuh): what each does with the
/// work items that the producer posts, in the two ways of sharing them that the course teaches.
///
///   cooperative (lesson 10)  every warpgroup takes every item: its 64 rows of the tile. Then the
///                            scheduler's fixup (lesson 14's, where it cuts tiles), among all of
///                            them, and the epilogue of its rows.
///   ping-pong (lesson 11)    the two warpgroups take the items in turns, warpgroup w those at
///                            positions w, w + 2, ...: a whole tile each. A 2 x 2 ordered barrier
///                            makes them alternate: one issues its MMAs while the other runs its
///                            epilogue, then hands the tensor cores over as soon as its last MMAs
///                            are issued, and the epilogues leave in the order of the items.
///                            Data-parallel schedulers only (the Stream-K fixup meets the tile's
///                            warpgroups on one barrier; a ping-pong tile has one).
/// Both leave the accumulators' last TMA stores to drain before they return (Epilogue::tail).
///
/// A warpgroup receives every item in both cases (the work queue counts every math warp): a
/// ping-pong warpgroup steps its ring state over the slices of the other's items, which the
/// producer loads in between, and counts the tiles stored, where the epilogue's rings stand.

#include <cstdint>

#include "common/hopper/trace.hpp"
#include "common/hopper/work_item.hpp"
#include "common/ptx/mbarrier.hpp"
#include "common/schedule/pipeline_state.hpp"

namespace gemm::hopper {

/// The ordered barrier of two ping-pong warpgroups (lesson 11): mma[w] completes a phase when the
/// other warpgroup passes warpgroup w the tensor cores, epilogue[w] likewise for the epilogues. One
/// arrival per phase.
struct ConsumerTurns {
  uint64_t mma[2];
  uint64_t epilogue[2];

#if defined(__CUDACC__)
  __device__ void init() {
    for (int w = 0; w < 2; ++w) {
      ptx::mbarrier_init(&mma[w], 1);
      ptx::mbarrier_init(&epilogue[w], 1);
    }
  }
  // A warpgroup waits for its turn on its own barrier (`turn` flips its phase after every wait)
  // and passes the turn by arriving, one thread for the warpgroup, on the other's.
  __device__ static void wait(uint64_t* own, PipelineState<1>& turn) {
    ptx::mbarrier_wait(own, turn.phase);
    turn.advance();
  }
  __device__ static void pass(uint64_t* other) {
    if (threadIdx.x % 128 == 0) ptx::mbarrier_arrive(other);
  }
#endif
};

#if defined(__CUDACC__)
template <class Kernel>
__device__ void run_cooperative_consumer(typename Kernel::SharedStorage& shared,
                                         const typename Kernel::Params& params, int warpgroup) {
  using Tile = typename Kernel::Tile;
  using Mainloop = typename Kernel::Mainloop;
  using Epilogue = typename Kernel::Epilogue;
  const int first_row = Tile::first_row(warpgroup);
  float accumulator[Tile::kRowBlocks][Tile::kBlockN / 2];
  int stored = 0;  // the tiles stored so far (where the epilogue's rings stand)
  auto read_state = PipelineState<Tile::kStages>::consumer_start();
  auto receive_state = PipelineState<Kernel::kWorkQueueDepth>::consumer_start();
  for (int position = 0;; ++position) {
    WorkItem item;
    if constexpr (Tile::kBlockN <= 128)
      item = position == 0 ? shared.first_item : shared.queue.receive(receive_state);
    else
      item = shared.queue.receive(receive_state);
    if (item.is_end()) break;
    Kernel::Trace::item(warpgroup, position, ItemEvent::received);
    Kernel::Trace::first_slice(warpgroup, position, shared.pipeline, read_state);
    const auto pending = Mainloop::template issue_mmas<Tile>(
        shared.pipeline, shared.ring, params.mainloop, accumulator, first_row, item, read_state);
    Mainloop::template drain<Tile>(shared.pipeline, accumulator, pending);
    Kernel::Trace::item(warpgroup, position, ItemEvent::mmas_complete);
    // The scheduler's fixup: of a tile cut into parts, only the last stores (lesson 14).
    if (!Kernel::Scheduler::template fixup<Tile>(params.workspace, item, accumulator)) continue;
    Epilogue::store_item(shared.epilogue, shared.epilogue_buffers, params.epilogue, accumulator,
                         warpgroup, first_row, item, stored, stored);
    Kernel::Trace::item(warpgroup, position, ItemEvent::stored);
    ++stored;
  }
  Epilogue::tail();
  Kernel::Trace::finished(warpgroup);
}

template <class Kernel>
__device__ void run_pingpong_consumer(typename Kernel::SharedStorage& shared,
                                      const typename Kernel::Params& params, int warpgroup) {
  static_assert(!Kernel::Scheduler::kCutsTiles, "ping-pong consumers take whole tiles");
  using Tile = typename Kernel::Tile;
  using Mainloop = typename Kernel::Mainloop;
  using Epilogue = typename Kernel::Epilogue;
  auto& turns = shared.turns;
  const int other = 1 - warpgroup;
  float accumulator[Tile::kRowBlocks][Tile::kBlockN / 2];
  int stored_by_warpgroup = 0, stored_by_block = 0;
  auto read_state = PipelineState<Tile::kStages>::consumer_start();
  auto receive_state = PipelineState<Kernel::kWorkQueueDepth>::consumer_start();
  // Warpgroup 0's first waits return at once: it starts on phase 1, a fresh barrier's "preceding
  // phase" (like a producer's first acquire); warpgroup 1 on phase 0, which completes when
  // warpgroup 0 passes the turn.
  PipelineState<1> mma_turn{0, warpgroup == 0 ? 1u : 0u};
  PipelineState<1> epilogue_turn = mma_turn;
  for (int64_t position = 0;; ++position) {
    const WorkItem item = shared.queue.receive(receive_state);
    if (item.is_end()) break;
    if (!Tile::computes(warpgroup, position)) {
      // The other warpgroup's item: the producer loads its slices next, then this one's.
      read_state.advance(item.k_end - item.k_begin);
      if (item.stores_tile()) ++stored_by_block;
      continue;
    }
    Kernel::Trace::item(warpgroup, stored_by_warpgroup, ItemEvent::received);
    Kernel::Trace::first_slice(warpgroup, stored_by_warpgroup, shared.pipeline, read_state);
    // MMA turn: wait until the other warpgroup has issued its last MMAs, issue this item's, and
    // hand the tensor cores over: the other's wgmmas queue behind these.
    ConsumerTurns::wait(&turns.mma[warpgroup], mma_turn);
    const auto pending = Mainloop::template issue_mmas<Tile>(
        shared.pipeline, shared.ring, params.mainloop, accumulator, /*first_row=*/0, item,
        read_state);
    ConsumerTurns::pass(&turns.mma[other]);
    Mainloop::template drain<Tile>(shared.pipeline, accumulator, pending);
    Kernel::Trace::item(warpgroup, stored_by_warpgroup, ItemEvent::mmas_complete);
    // Epilogue turn: the tiles leave in the order of the items, one warpgroup at a time, while the
    // other's MMAs run. (A data-parallel item is a whole tile: it always stores.)
    ConsumerTurns::wait(&turns.epilogue[warpgroup], epilogue_turn);
    Epilogue::store_item(shared.epilogue, shared.epilogue_buffers, params.epilogue, accumulator,
                         warpgroup, /*first_row=*/0, item, stored_by_warpgroup, stored_by_block);
    Kernel::Trace::item(warpgroup, stored_by_warpgroup, ItemEvent::stored);
    ++stored_by_warpgroup;
    ++stored_by_block;
    ConsumerTurns::pass(&turns.epilogue[other]);
  }
  Epilogue::tail();
  Kernel::Trace::finished(warpgroup);
}
#endif

}  // namespace gemm::hopper
