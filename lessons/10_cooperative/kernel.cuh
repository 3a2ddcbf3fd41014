// Lesson 10: cooperative consumers: two warpgroups share one 128 x 256 tile.
//
// Lesson 09's block computes a 128 x 128 tile with one consumer warpgroup: per 64-wide slice it
// loads 32 KB and does 2 * 128 * 128 * 64 FLOPs, 64 FLOPs per byte from L2. Here the tile doubles
// along N and a second consumer warpgroup joins: the two split the tile's rows, each computing
// 64 x 256 with one wgmma.m64n256k16 per k-step, and both read the same 256 rows of B. A slice is
// now 48 KB for twice the FLOPs: 85 FLOPs per byte, a third more. Each consumer thread still holds
// 128 accumulators, but three warpgroups now share the SM's registers: 168 each at launch, too few.
// setmaxnreg moves registers from the producer, which needs few, to the consumers.
// Graded instruction signature: HGMMA UTMALDG SYNCS.PHASECHK USETMAXREG
#pragma once

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
#include "common/ptx/setmaxnreg.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/shared_memory.hpp"
#include "common/tensor_map.hpp"

namespace lesson10 {

using gemm::bf16;
using gemm::hopper::kBlockK;  // K per shared-memory slice: rows of 128 bytes
using gemm::taught::load_k_range;  // lesson 09's producer loop
using gemm::taught::mma_k_range;   // lesson 09's consumer loop
using gemm::taught::store_rows;    // lesson 07's epilogue

// NEW in lesson 10: the configuration: a 128 x 256 tile split between 2 consumer warpgroups of
// 64 x 256 (one wgmma.m64n256k16 per k-step, 128 fp32 accumulators per thread), and 4 stages of
// 48 KB: 192 KB, the most that fit in the 227 KB a block may use (gemm::kMaxSharedBytesPerBlock)
// next to the barriers and the alignment slack. The README measures 3 and 4.
using DefaultTile = gemm::hopper::TileShape<128, 256, 4, /*Consumers=*/2>;
constexpr int kBlocksPerSm = 1;

// NEW in lesson 10: the register budget. __launch_bounds__(384, 1) caps the kernel at
// 65536 / 384 = 168 registers per thread at launch (rounded down to a multiple of 8); the producer
// warpgroup gives its share down to kProducerRegisters (setmaxnreg.dec) and the consumers take
// what that frees (setmaxnreg.inc, kConsumerRegisters: gemm::hopper::consumer_registers).
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters =
    gemm::hopper::consumer_registers(DefaultTile::kThreads, kBlocksPerSm, kProducerRegisters);

// Everything the block keeps in dynamic shared memory: the ring of slices and its pipeline.
template <class Tile>
struct SharedStorage {
  gemm::hopper::OperandRing<Tile> ring;
  gemm::hopper::TmaPipeline<Tile::kStages> pipeline;
};

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

  // Thread 0 sets up the barriers (lesson 09); NEW in lesson 10: each stage's empty barrier now
  // waits for the warps of BOTH consumers, since both read every stage. The block barrier makes
  // the initialization visible to every thread.
  if (threadIdx.x == 0) {
    gemm::ptx::prefetch_tensor_map(&a_map);
    gemm::ptx::prefetch_tensor_map(&b_map);
    pipeline.init(/*consumer_warps=*/Tile::kConsumers * 4);
  }
  __syncthreads();

  // The roles (lesson 09), one branch per warpgroup, as setmaxnreg (warpgroup-wide) also requires.
  if (warpgroup == 0) {
    // ---- Producer warpgroup: registers down; one elected thread issues every load. ----
    // BEGIN EXERCISE(producer_registers): give this warpgroup's registers, all but
    //   kProducerRegisters per thread, back for the consumers to take
    gemm::ptx::setmaxnreg_dec<kProducerRegisters>();
    // END EXERCISE
    if (threadIdx.x == 0) {
      auto write_state = gemm::PipelineState<Tile::kStages>::producer_start();
      load_k_range<Tile>(pipeline, shared.ring, a_map, b_map, row0, col0, 0, k_slices, write_state);
    }
    return;
  }

  // ---- Consumer warpgroups: NEW in lesson 10: registers up, once the producer has given its
  // share back (setmaxnreg.inc waits until the block's pool can supply them). ----
  gemm::ptx::setmaxnreg_inc<kConsumerRegisters>();
  // NEW in lesson 10: consumer c (warpgroup c + 1) computes its kConsumerRows rows of the tile, all
  // 256 columns; both consumers read the whole B stage, which is what the larger tile buys.
  const int consumer = warpgroup - 1;
  // BEGIN EXERCISE(consumer_rows, declares=first_row): the first row of the tile (and of the A
  //   stage) that this consumer multiplies
  const int first_row = consumer * Tile::kConsumerRows;
  // END EXERCISE
  float accumulator[Tile::kRowBlocks][Tile::kBlockN / 2];
  auto read_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  const auto last_stage =
      mma_k_range<Tile>(pipeline, shared.ring, accumulator, first_row, 0, k_slices, read_state);
  gemm::hopper::mma_drain(pipeline, accumulator, last_stage);

  // The epilogue of lesson 07.
  // BEGIN EXERCISE(output_rows): store this consumer's rows of the tile to D
#pragma unroll
  for (int r = 0; r < Tile::kRowBlocks; ++r)
    store_rows(d, accumulator[r], row0 + first_row + r * Tile::kWarpgroupM, col0, m, n);
  // END EXERCISE
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

}  // namespace lesson10
