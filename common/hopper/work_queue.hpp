#pragma once
// The work queue of a persistent block (lessons 13-15): the producer thread decides which work
// item comes next and posts it; the consumer warpgroups take the items in the same order.
// Introduced in lesson 13 (its README walks through it).
//
// Why a queue: the schedule's arithmetic (the grouped order, lesson 14's Stream-K units: 64-bit
// divisions) then runs once per item, in the producer, which has registers to spare and runs
// ahead of the consumers anyway, and not in the consumers, whose registers hold the accumulators.
// And the loops over slices (common/hopper/load_k_range*.hpp, mma_k_range.hpp) never learn what
// kind of work they are doing: a whole tile, or a part of one.
//
// A ring of Depth slots, each with a full and an empty barrier: the pipeline's protocol
// (common/hopper/pipeline.hpp) on a smaller scale.
//   post (the producer thread): wait until the slot is empty, write the item, arrive on the
//     slot's full barrier. mbarrier.arrive has release semantics (CTA scope): the item's stores
//     are visible to whoever waits on that phase.
//   receive (every consumer thread): lane 0 of each warp waits on the full barrier (acquire),
//     reads the item, arrives on the empty barrier for the warp, and shuffles the item to the
//     other lanes.
// After the last item the producer posts an item without slices: the end of the work.

#include <cstdint>

#include "common/hopper/work_item.hpp"
#include "common/ptx/mbarrier.hpp"
#include "common/schedule/pipeline_state.hpp"

namespace gemm::hopper {

template <int Depth>
struct WorkQueue {
  using State = PipelineState<Depth>;

  WorkItem items[Depth];
  uint64_t full[Depth];
  uint64_t empty[Depth];

#if defined(__CUDACC__)
  // One thread, before the block barrier that precedes every use (as the pipeline's init).
  // `consumer_warps`: the warps that receive every item.
  __device__ void init(int consumer_warps) {
    for (int slot = 0; slot < Depth; ++slot) {
      ptx::mbarrier_init(&full[slot], 1);
      ptx::mbarrier_init(&empty[slot], consumer_warps);
    }
  }

  // The producer thread; `state` starts at State::producer_start().
  __device__ void post(State& state, const WorkItem& item) {
    ptx::mbarrier_wait(&empty[state.index], state.phase);
    items[state.index] = item;
    ptx::mbarrier_arrive(&full[state.index]);
    state.advance();
  }

  // The producer thread's post of its position-th item (0, 1, ...): the state follows from the
  // position, where the producer has no register to spare for it (the final kernel, lesson 15).
  __device__ void post_at(int64_t position, const WorkItem& item) {
    State state = State::producer_start().advanced(int(position));
    post(state, item);
  }

  // The producer thread's own item of position `position`, read back from its slot: the producer
  // alone writes the slots, and this one is not written again before position + Depth.
  __device__ WorkItem posted_at(int64_t position) const {
    return items[State::producer_start().advanced(int(position)).index];
  }
  // Every consumer thread; `state` starts at State::consumer_start(). Lane 0 of each warp waits,
  // reads the slot and releases it; the other lanes get the item from lane 0 by shuffles. (Had
  // every lane read the slot, a __syncwarp before lane 0's release would order those reads before
  // it, but compute-sanitizer's racecheck does not follow that chain and reports a race with the
  // producer's next write to the slot: one lane that reads and releases is plainly ordered.)
  __device__ WorkItem receive(State& state) {
    WorkItem item;
    if (threadIdx.x % 32 == 0) item = take(state);
    state.advance();
    item.row0 = __shfl_sync(0xffffffffu, item.row0, 0);
    item.col0 = __shfl_sync(0xffffffffu, item.col0, 0);
    item.k_begin = __shfl_sync(0xffffffffu, item.k_begin, 0);
    item.k_end = __shfl_sync(0xffffffffu, item.k_end, 0);
    item.unit = __shfl_sync(0xffffffffu, item.unit, 0);
    item.units = __shfl_sync(0xffffffffu, item.units, 0);
    item.slot = __shfl_sync(0xffffffffu, item.slot, 0);
    return item;
  }

  // One thread that alone receives every item (init with consumer_warps = 1): lesson 15's
  // epilogue loader. What lane 0 does in receive(), without the shuffles.
  __device__ WorkItem receive_alone(State& state) {
    const WorkItem item = take(state);
    state.advance();
    return item;
  }

  // One thread's part of a receive: wait until the state's slot holds an item (acquire), read it,
  // and release the slot for the warp.
  __device__ WorkItem take(const State& state) {
    ptx::mbarrier_wait(&full[state.index], state.phase);
    const WorkItem item = items[state.index];
    ptx::mbarrier_arrive(&empty[state.index]);
    return item;
  }
#endif
};

}  // namespace gemm::hopper
