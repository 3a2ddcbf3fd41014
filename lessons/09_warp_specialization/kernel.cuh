// Lesson 09: warp specialization: a producer warpgroup loads, a consumer warpgroup computes.
//
// In lesson 08 every warpgroup did everything in turn: wait for a stage, compute, then meet at a
// block barrier so that thread 0 could refill the stage. Here the roles are split. A producer
// warpgroup only issues TMA loads (one elected thread does it) and runs ahead as far as the ring
// allows; a consumer warpgroup only computes, the block's whole 128 x 128 tile. They meet on two
// barriers per stage: "full" (the producer's bytes have landed; the consumer waits on it) and
// "empty" (the consumer is done reading; the producer waits on it), the pipeline of
// common/hopper/pipeline.hpp. No block-wide barrier is left in the main loop, and the consumer
// keeps one wgmma group running across slices. The block is alone on its SM (its ring of 4 stages
// takes 128 KB), so the ring by itself must hide the loads' latency.
//
// Graded instruction signature: HGMMA UTMALDG SYNCS.PHASECHK
#pragma once

#include <cstdint>

#include "common/gemm.hpp"
#include "common/hopper/consumer.hpp"
#include "common/hopper/kstep_descriptor.hpp"
#include "common/hopper/pipeline.hpp"
#include "common/hopper/store_rows.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/shared_memory.hpp"
#include "common/tensor_map.hpp"

namespace lesson09 {

using gemm::bf16;
using gemm::hopper::kBlockK;  // K per shared-memory slice: rows of 128 bytes
using gemm::taught::store_rows;  // lesson 07's epilogue

// NEW in lesson 09: the block's configuration (common/hopper/tile_shape.hpp): a 128 x 128 tile,
// ONE consumer warpgroup computing all of it with two wgmma.m64n128k16 per k-step (128 fp32
// accumulators per thread), and a ring of 4 stages of 32 KB (128 KB) instead of lesson 08's 2:
// only one such block fits on an SM, and the ring alone must cover the load latency. The README
// measures 2 to 5 stages, so this change has its own row.
using DefaultTile = gemm::hopper::TileShape<128, 128, 4, /*Consumers=*/1>;
constexpr int kBlocksPerSm = 1;

// Everything the block keeps in dynamic shared memory: the ring of slices and its barriers.
template <class Tile>
struct SharedStorage {
  gemm::hopper::OperandRing<Tile> ring;
  // NEW in lesson 09: the pipeline: a full and an empty barrier per stage, and the four verbs
  // producer_acquire, (producer_commit), consumer_wait, consumer_release.
  gemm::hopper::TmaPipeline<Tile::kStages> pipeline;
};

// NEW in lesson 09: the producer's loop over a range of slices, each into the next stage.
// BEGIN TEACHING COPY(load_k_range)
// One thread loads slices k_begin .. k_end - 1 of the tile whose first row of A is row0 and
// first row of B is col0; `state` walks on through the ring (it carries on from call to call).
template <class Tile, class Pipeline>
__device__ inline void load_k_range(Pipeline& pipeline, gemm::hopper::OperandRing<Tile>& ring,
                                    const CUtensorMap& a_map, const CUtensorMap& b_map, int row0,
                                    int col0, int k_begin, int k_end,
                                    gemm::PipelineState<Tile::kStages>& state) {
  for (int slice = k_begin; slice < k_end; ++slice) {
    // BEGIN EXERCISE(producer): acquire the next stage, then load slice `slice` of A and B into
    //   it, both counted on the stage's full barrier
    pipeline.producer_acquire(state, Tile::kStageBytes);
    uint64_t* full = pipeline.full_barrier(state);
    gemm::ptx::tma_load_2d(ring.a[state.index], &a_map, full, slice * Tile::kBlockK, row0);
    gemm::ptx::tma_load_2d(ring.b[state.index], &b_map, full, slice * Tile::kBlockK, col0);
    // END EXERCISE
    state.advance();
  }
}
// END TEACHING COPY

// NEW in lesson 09: the consumer's loop over a range of slices.
// BEGIN TEACHING COPY(mma_k_range)
// Slices k_begin .. k_end - 1 (at least one) of the consumer's rows first_row ..
// first_row + kConsumerRows - 1 of the tile, into its accumulators (one array of BlockN / 2 per
// 64-row block); the first k-step of slice k_begin overwrites them (scale-d = 0, lesson 07).
// `read_state` walks on through the ring. On return the last slice's wgmmas may still run and its
// stage is not released: the returned state is that stage's, for mma_drain.
template <class Tile, class Pipeline>
__device__ inline gemm::PipelineState<Tile::kStages> mma_k_range(
    Pipeline& pipeline, const gemm::hopper::OperandRing<Tile>& ring,
    float (&accumulator)[Tile::kRowBlocks][Tile::kBlockN / 2], int first_row, int k_begin,
    int k_end, gemm::PipelineState<Tile::kStages>& read_state) {
  auto release_state = read_state;  // the oldest stage this warpgroup still reads
  for (int kt = k_begin; kt < k_end; ++kt) {
    pipeline.consumer_wait(read_state);
    const bf16* a_rows = ring.a[read_state.index] + first_row * Tile::kBlockK;
    const bf16* b_tile = ring.b[read_state.index];
    gemm::ptx::warpgroup_fence_operand(accumulator);
    gemm::ptx::wgmma_fence();
#pragma unroll
    for (int step = 0; step < Tile::kKSteps; ++step) {
#pragma unroll
      for (int r = 0; r < Tile::kRowBlocks; ++r)
        gemm::ptx::wgmma_m64k16_bf16<Tile::kBlockN>(
            accumulator[r],
            gemm::taught::kstep_descriptor(a_rows + r * Tile::kWarpgroupM * Tile::kBlockK, step),
            gemm::taught::kstep_descriptor(b_tile, step), /*accumulate=*/kt > k_begin || step > 0);
    }
    gemm::ptx::wgmma_commit_group();
    // Wait until at most ONE group is pending: this slice's wgmmas keep running while the previous
    // slice's are retired, so the tensor cores never drain between slices.
    gemm::ptx::wgmma_wait_group<1>();
    gemm::ptx::warpgroup_fence_operand(accumulator);
    // BEGIN EXERCISE(release): release the stage whose wgmmas are now known to be complete, if any,
    //   and move on to the next stage to release
    // Only now is the previous slice's stage known to be no longer read: release it.
    if (kt > k_begin) {
      pipeline.consumer_release(release_state);
      release_state.advance();
    }
    // END EXERCISE
    read_state.advance();
  }
  return release_state;
}
// END TEACHING COPY

template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, kBlocksPerSm)
    gemm_kernel(int m, int n, int k, const __grid_constant__ CUtensorMap a_map,
                const __grid_constant__ CUtensorMap b_map, bf16* d) {
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);
  auto& pipeline = shared.pipeline;

  const int tiles_n = gemm::ceil_div(n, Tile::kBlockN);
  const int row0 = (blockIdx.x / tiles_n) * Tile::kBlockM;
  const int col0 = (blockIdx.x % tiles_n) * Tile::kBlockN;
  const int k_slices = gemm::ceil_div(k, kBlockK);
  const int warpgroup = threadIdx.x / 128;

  // Thread 0 sets up the barriers (NEW in lesson 09: the empty barriers expect one arrival per
  // consumer warp) and fences them for the async proxy; the block barrier makes them visible to
  // every thread before anyone waits or arrives.
  if (threadIdx.x == 0) {
    gemm::ptx::prefetch_tensor_map(&a_map);
    gemm::ptx::prefetch_tensor_map(&b_map);
    pipeline.init(/*consumer_warps=*/Tile::kConsumers * 4);
  }
  __syncthreads();

  // NEW in lesson 09: the roles, one branch per warpgroup (wgmma is warpgroup-wide).
  if (warpgroup == 0) {
    // ---- Producer warpgroup: one elected thread issues every load. ----
    if (threadIdx.x == 0) {
      auto write_state = gemm::PipelineState<Tile::kStages>::producer_start();
      load_k_range<Tile>(pipeline, shared.ring, a_map, b_map, row0, col0, 0, k_slices, write_state);
    }
    // The producer's warps are done. They may exit: TMA copies in flight complete anyway, and the
    // block lives on until the consumer finishes.
    return;
  }

  // ---- Consumer warpgroup: the whole tile's accumulators. ----
  float accumulator[Tile::kRowBlocks][Tile::kBlockN / 2];
  auto read_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  const auto last_stage =
      mma_k_range<Tile>(pipeline, shared.ring, accumulator, 0, 0, k_slices, read_state);
  // Drain: the last slice's wgmmas, then its stage (common/hopper/consumer.hpp).
  gemm::hopper::mma_drain(pipeline, accumulator, last_stage);

  // The epilogue of lesson 07, once per 64-row block of the tile.
#pragma unroll
  for (int r = 0; r < Tile::kRowBlocks; ++r)
    store_rows(d, accumulator[r], row0 + r * Tile::kWarpgroupM, col0, m, n);
}

// Runs the kernel with any tile configuration (the sweep drivers under profiles/ time others).
template <class Tile>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  const int64_t tiles =
      gemm::ceil_div<int64_t>(p.m, Tile::kBlockM) * gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  // The tensor maps of A and B (lesson 08), built on the host and passed by value. Boxes of
  // BlockM (BlockN) rows by 64 K values, 128-byte swizzle, zeros outside the matrix.
  const CUtensorMap a_map =
      gemm::make_tensor_map(args.a, gemm::kmajor_tile_map_args(p.m, p.k, Tile::kBlockM, kBlockK));
  const CUtensorMap b_map =
      gemm::make_tensor_map(args.b, gemm::kmajor_tile_map_args(p.n, p.k, Tile::kBlockN, kBlockK));
  // More than 48 KB of dynamic shared memory must be allowed explicitly, plus room to align the
  // storage to 1024 bytes.
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile>>(shared_bytes);
  gemm_kernel<Tile><<<unsigned(tiles), Tile::kThreads, shared_bytes, stream>>>(
      int(p.m), int(p.n), int(p.k), a_map, b_map, args.d);
}

inline void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch_tile<DefaultTile>(args, stream);
}

// The launch as the harness takes it, planned: one launch function, nothing to choose.
using Launch = gemm::OneLaunch<&launch>;

inline constexpr gemm::Lesson kLesson{
    .min_arch = gemm::MinArch::sm90a,
    .plan = &Launch::plan,
    .launch_planned = &Launch::launch,
};

}  // namespace lesson09
