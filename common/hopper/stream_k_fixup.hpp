#pragma once
// The Stream-K fixup (lessons 14-15): the parts of a tile cut along K meet in the workspace, in
// the order of their k-ranges, and the part holding the tile's last k-iteration stores it.
// Taught in lesson 14: lessons/14_stream_k/kernel.cuh spells it out with its exercise regions
// (tests/tools/test_teaching_copies.py keeps the two identical).

#include <cstdint>

#include <vector_types.h>

#include "common/hopper/named_barriers.hpp"
#include "common/hopper/stream_k_workspace.hpp"
#include "common/hopper/work_item.hpp"
#include "common/ptx/memory_order.hpp"
#include "common/ptx/named_barrier.hpp"

namespace gemm::taught {

#if defined(__CUDACC__)
// BEGIN TEACHING COPY(stream_k_fixup)
// Waits until `count` parts of the tile have added their partial sums: one thread reads the flag
// with acquire semantics until it holds `count`, then the consumers' barrier hands what it
// acquired (the other blocks' partial sums) to all of them.
template <class Tile>
__device__ inline void wait_for_parts(const uint32_t* flag, uint32_t count) {
  if (threadIdx.x == 128)
    while (gemm::ptx::load_acquire_gpu(flag) != count) {
    }
  gemm::ptx::named_barrier_sync(gemm::hopper::kConsumersBarrier,
                                gemm::hopper::StreamKWorkspace<Tile>::kConsumerThreads);
}

// Announces that `count` parts have now added theirs: the barrier makes sure that every consumer
// thread has written its share, then one thread stores the flag with release semantics, which
// publishes all of those writes at GPU scope (release is cumulative).
template <class Tile>
__device__ inline void publish_parts(uint32_t* flag, uint32_t count) {
  gemm::ptx::named_barrier_sync(gemm::hopper::kConsumersBarrier,
                                gemm::hopper::StreamKWorkspace<Tile>::kConsumerThreads);
  if (threadIdx.x == 128) gemm::ptx::store_release_gpu(flag, count);
}

// The fixup of one work item, called by every consumer thread after its MMAs: whether this part
// stores the tile. A whole tile stores itself. Of a tile cut into parts, part u (in the order of
// the k-ranges) waits until parts 0 .. u - 1 have added theirs; every part but the last then
// leaves the sum so far in the workspace (part 0 writes its own sums, the others add theirs) and
// counts itself; the last part resets the flag, adds the sum to its accumulators and stores the
// tile. The order is fixed, so the result is the same, bit for bit, from run to run.
template <class Tile>
__device__ inline bool stream_k_fixup(const gemm::hopper::StreamKWorkspace<Tile>& workspace,
                                      const gemm::hopper::WorkItem& item,
                                      float (&accumulator)[Tile::kRowBlocks][Tile::kBlockN / 2]) {
  using Workspace = gemm::hopper::StreamKWorkspace<Tile>;
  if (item.units == 1) return true;
  uint32_t* flag = workspace.flags + item.slot;
  // This thread's float4s of the tile's partial sums: its i-th is at partial[i * kConsumerThreads].
  float4* partial = reinterpret_cast<float4*>(workspace.partials + item.slot * Workspace::kTileFloats) +
                    (threadIdx.x - 128);
  constexpr int kFloat4s = Tile::kBlockN / 2 / 4;  // per 64-row block of accumulators
  if (item.unit > 0) wait_for_parts<Tile>(flag, uint32_t(item.unit));
  // .cg: through L2, where the other SMs' writes are, never from this SM's L1.
  if (item.unit == item.units - 1) {
    // Every other part has counted itself, and nothing reads the flag again in this launch: leave
    // it as the next launch needs it, 0. A workspace zeroed once then stays ready.
    if (threadIdx.x == 128) *flag = 0;
#pragma unroll
    for (int r = 0; r < Tile::kRowBlocks; ++r)
#pragma unroll
      for (int i = 0; i < kFloat4s; ++i) {
        const float4 before = __ldcg(partial + (r * kFloat4s + i) * Workspace::kConsumerThreads);
        accumulator[r][4 * i] += before.x;
        accumulator[r][4 * i + 1] += before.y;
        accumulator[r][4 * i + 2] += before.z;
        accumulator[r][4 * i + 3] += before.w;
      }
    return true;
  }
#pragma unroll
  for (int r = 0; r < Tile::kRowBlocks; ++r)
#pragma unroll
    for (int i = 0; i < kFloat4s; ++i) {
      float4* cell = partial + (r * kFloat4s + i) * Workspace::kConsumerThreads;
      float4 sum = make_float4(accumulator[r][4 * i], accumulator[r][4 * i + 1],
                               accumulator[r][4 * i + 2], accumulator[r][4 * i + 3]);
      if (item.unit > 0) {
        const float4 before = __ldcg(cell);
        sum = make_float4(before.x + sum.x, before.y + sum.y, before.z + sum.z, before.w + sum.w);
      }
      __stcg(cell, sum);
    }
  publish_parts<Tile>(flag, uint32_t(item.unit + 1));
  return false;
}
// END TEACHING COPY
#endif

}  // namespace gemm::taught
