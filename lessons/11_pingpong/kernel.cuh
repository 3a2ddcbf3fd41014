// Lesson 11: ping-pong consumers on a persistent grid.
//
// In lesson 10 both consumer warpgroups work on the same tile, so they also reach its epilogue
// together: while they convert and store 128 accumulators each, no wgmma runs, and the tensor
// cores wait. Then the block ends and a new one starts from an empty pipeline. Here:
//   - the grid is persistent: one block per SM, looping over tiles (tile i * grid + block);
//   - each consumer warpgroup owns WHOLE tiles, as lesson 09's one consumer did, and the two take
//     turns: consumer 0 computes the block's even tiles, consumer 1 its odd ones;
//   - a 2 x 2 ordered barrier makes them alternate: consumer 0 issues its MMAs while consumer 1
//     stores its previous tile, then hands the tensor cores over to consumer 1 as soon as its
//     last MMAs are issued, and stores while they run. One consumer's epilogue hides behind the
//     other's wgmmas, and the tensor cores stay busy;
//   - the producer never stops: it loads the next tile's slices while a consumer still computes.
// The price: each tile is one warpgroup's, at most 128 accumulators per thread, so a tile is
// half the size of lesson 10's and its loads feed a quarter fewer FLOPs per byte.
// Graded instruction signature: HGMMA UTMALDG SYNCS.PHASECHK USETMAXREG
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/gemm.hpp"
#include "common/hopper/consumer.hpp"
#include "common/hopper/load_k_range.hpp"
#include "common/hopper/mma_k_range.hpp"
#include "common/hopper/pipeline.hpp"
#include "common/hopper/store_rows.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/mbarrier.hpp"
#include "common/ptx/setmaxnreg.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/persistent.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/schedule/raster.hpp"
#include "common/shared_memory.hpp"
#include "common/tensor_map.hpp"

namespace lesson11 {

using gemm::bf16;
using gemm::hopper::kBlockK;  // K per shared-memory slice: rows of 128 bytes
using gemm::taught::load_k_range;  // lesson 09's producer loop
using gemm::taught::mma_k_range;   // lesson 09's consumer loop
using gemm::taught::store_rows;    // lesson 07's epilogue

// NEW in lesson 11: a tile is ONE consumer warpgroup's work, as in lesson 09: 128 x 128, two
// wgmma.m64n128k16 per k-step, 128 accumulators per thread. 6 stages of 32 KB (192 KB). The README
// also measures 64 x 256 tiles (one m64n256k16, 5 stages of 40 KB).
using DefaultTile = gemm::hopper::TileShape<128, 128, 6, /*Consumers=*/1>;
// NEW in lesson 11: two consumers per block, taking turns; with the producer, three warpgroups.
constexpr int kPingPongConsumers = 2;
constexpr int kThreads = (1 + kPingPongConsumers) * 128;
constexpr int kBlocksPerSm = 1;

// The register budget (lesson 10): the producer gives its share down to kProducerRegisters, the
// consumers take what that frees (gemm::hopper::consumer_registers).
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters =
    gemm::hopper::consumer_registers(kThreads, kBlocksPerSm, kProducerRegisters);

template <class Tile>
struct SharedStorage {
  gemm::hopper::OperandRing<Tile> ring;
  // The pipeline (lesson 09). NEW in lesson 11: a stage holds a slice of one consumer's tile, so
  // only that consumer's 4 warps release it.
  gemm::hopper::TmaPipeline<Tile::kStages> pipeline;
  // NEW in lesson 11: the 2 x 2 ordered barrier. mma_turn[c] completes a phase when the other
  // consumer passes consumer c the tensor cores; epilogue_turn[c] likewise for the epilogues.
  // One arrival per phase.
  uint64_t mma_turn[kPingPongConsumers];
  uint64_t epilogue_turn[kPingPongConsumers];
};

// NEW in lesson 11: the ordered barrier's two verbs. A consumer waits for its turn on its own
// barrier and passes the turn by arriving (one thread for the warpgroup) on the other consumer's.
// `turn` is a one-stage pipeline state: its phase flips after every wait.
__device__ inline void wait_for_turn(uint64_t* own_turn, gemm::PipelineState<1>& turn) {
  gemm::ptx::mbarrier_wait(own_turn, turn.phase);
  turn.advance();
}
__device__ inline void pass_turn(uint64_t* other_turn) {
  if (threadIdx.x % 128 == 0) gemm::ptx::mbarrier_arrive(other_turn);
}

template <class Tile>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    gemm_kernel(int m, int n, int k, const __grid_constant__ CUtensorMap a_map,
                const __grid_constant__ CUtensorMap b_map, bf16* d, int raster_group) {
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);
  auto& pipeline = shared.pipeline;

  // NEW in lesson 11: this block's tiles are the iterations i = 0, 1, 2, ... of the persistent
  // schedule, tile i * gridDim.x + blockIdx.x (common/schedule/persistent.hpp), numbered in the
  // grouped order of common/schedule/raster.hpp (raster_group tile rows at a time; 1: row-major).
  const int64_t tiles_m = gemm::ceil_div(m, Tile::kBlockM);
  const int64_t tiles_n = gemm::ceil_div(n, Tile::kBlockN);
  const int64_t block_tiles = gemm::persistent_tile_count(blockIdx.x, gridDim.x, tiles_m * tiles_n);
  const auto tile_of = [&](int64_t i) {
    return gemm::grouped_tile(gemm::persistent_tile(blockIdx.x, gridDim.x, i), tiles_m, tiles_n,
                              raster_group);
  };
  const int k_slices = gemm::ceil_div(k, kBlockK);
  const int warpgroup = threadIdx.x / 128;

  // Thread 0 sets up the barriers: the pipeline's (lesson 09; NEW in lesson 11: the empty
  // barriers expect the 4 warps of the one consumer that reads the stage) and the turns (one
  // arrival each). The block barrier makes them visible to every thread.
  if (threadIdx.x == 0) {
    gemm::ptx::prefetch_tensor_map(&a_map);
    gemm::ptx::prefetch_tensor_map(&b_map);
    for (int consumer = 0; consumer < kPingPongConsumers; ++consumer) {
      gemm::ptx::mbarrier_init(&shared.mma_turn[consumer], 1);
      gemm::ptx::mbarrier_init(&shared.epilogue_turn[consumer], 1);
    }
    pipeline.init(/*consumer_warps=*/Tile::kConsumers * 4);
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---- Producer warpgroup: one elected thread loads every slice of every tile of the block,
    // in order, running ahead into the next tile as far as the ring allows. ----
    gemm::ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) {
      auto write_state = gemm::PipelineState<Tile::kStages>::producer_start();
      for (int64_t i = 0; i < block_tiles; ++i) {
        const gemm::TileCoordinates tile = tile_of(i);
        load_k_range<Tile>(pipeline, shared.ring, a_map, b_map, int(tile.m) * Tile::kBlockM,
                           int(tile.n) * Tile::kBlockN, 0, k_slices, write_state);
      }
    }
    // TMA copies in flight complete anyway; the consumers wait for them.
    return;
  }

  // ---- Consumer warpgroups: registers up; each computes every other tile of the block. ----
  gemm::ptx::setmaxnreg_inc<kConsumerRegisters>();
  const int consumer = warpgroup - 1;
  float accumulator[Tile::kRowBlocks][Tile::kBlockN / 2];

  // NEW in lesson 11: the producer fills the ring with the slices of the block's tiles in order:
  // tile 0's k_slices slices, then tile 1's, ... Consumer 1's first slice is therefore the
  // (k_slices)-th of the ring: it starts that far on. Phases carry on from tile to tile.
  auto read_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  read_state.advance(consumer * k_slices);
  // BEGIN EXERCISE(first_turn, declares=mma_turn epilogue_turn): the phase each consumer's turns
  //   start on, so that consumer 0 takes the first MMA and epilogue turns and consumer 1 waits
  //   for consumer 0 to pass them
  // Consumer 0's first waits must return at once: it starts on phase 1, a fresh barrier's
  // "preceding phase" (like a producer's first acquire); consumer 1 on phase 0, which completes
  // when consumer 0 passes the turn.
  gemm::PipelineState<1> mma_turn{0, consumer == 0 ? 1u : 0u};
  gemm::PipelineState<1> epilogue_turn = mma_turn;
  // END EXERCISE

  for (int64_t i = consumer; i < block_tiles; i += kPingPongConsumers) {
    const gemm::TileCoordinates tile = tile_of(i);

    // MMA turn: wait until the other consumer has issued its last MMAs, then issue this tile's.
    wait_for_turn(&shared.mma_turn[consumer], mma_turn);
    const auto last_stage =
        mma_k_range<Tile>(pipeline, shared.ring, accumulator, 0, 0, k_slices, read_state);
    // BEGIN EXERCISE(hand_over): hand the tensor cores to the other consumer now that this tile's
    //   MMAs are issued
    // This consumer's last wgmmas are queued on the tensor cores: the other consumer's queue
    // behind them, and the tensor cores need not drain between the two (as CUTLASS does it).
    pass_turn(&shared.mma_turn[1 - consumer]);
    // END EXERCISE
    // Drain: the last slice's wgmmas, then its stage (lesson 09).
    gemm::hopper::mma_drain(pipeline, accumulator, last_stage);

    // Epilogue turn: stores leave in tile order, one consumer at a time, while the other's MMAs
    // run.
    wait_for_turn(&shared.epilogue_turn[consumer], epilogue_turn);
#pragma unroll
    for (int r = 0; r < Tile::kRowBlocks; ++r)
      store_rows(d, accumulator[r], int(tile.m) * Tile::kBlockM + r * Tile::kWarpgroupM,
                 int(tile.n) * Tile::kBlockN, m, n);
    pass_turn(&shared.epilogue_turn[1 - consumer]);

    // BEGIN EXERCISE(skip_other_tile): move this consumer's pipeline state past the slices of
    //   the other consumer's tile, which the producer loads next
    read_state.advance(k_slices);
    // END EXERCISE
  }
}

// Runs the kernel with any tile configuration and raster group (the sweep drivers under profiles/
// time others).
template <class Tile, int RasterGroup = 8>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  const int64_t tiles =
      gemm::ceil_div<int64_t>(p.m, Tile::kBlockM) * gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  // The tensor maps of A and B (lesson 08): boxes of BlockM (BlockN) rows by 64 K values,
  // 128-byte swizzle, zeros outside the matrix.
  const CUtensorMap a_map =
      gemm::make_tensor_map(args.a, gemm::kmajor_tile_map_args(p.m, p.k, Tile::kBlockM, kBlockK));
  const CUtensorMap b_map =
      gemm::make_tensor_map(args.b, gemm::kmajor_tile_map_args(p.n, p.k, Tile::kBlockN, kBlockK));
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  constexpr auto kernel = gemm_kernel<Tile>;
  gemm::allow_dynamic_shared_memory<kernel>(shared_bytes);
  // NEW in lesson 11: a persistent grid of as many blocks as can be resident at once (one per SM
  // here), never more than there are tiles.
  const int64_t resident = gemm::resident_blocks<kernel>(kThreads, shared_bytes);
  const unsigned grid = unsigned(std::min(tiles, resident));
  kernel<<<grid, kThreads, shared_bytes, stream>>>(int(p.m), int(p.n), int(p.k), a_map, b_map,
                                                   args.d, RasterGroup);
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

}  // namespace lesson11
