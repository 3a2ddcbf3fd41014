// Lesson 18 (a supplement past the ladder): fp8 operands with fine-grained block scaling.
//
// Hopper's tensor cores multiply e4m3 (8-bit floats: 4 exponent bits, 3 mantissa bits, at most
// 448) at twice the rate of bf16, and an e4m3 operand is half the bytes. e4m3 alone cannot hold a
// matrix whose values span many orders of magnitude, so each block of values is divided by a
// scale of its own before it is rounded to e4m3 (common/fp8_block_scaling.hpp): one fp32 scale
// per row and 128 values of K for A, one per 128 x 128 block for B (gemm::BlockScaledOperands).
// The product must put the scales back: D = sum over K blocks kb of
//   scale_a[row][kb] * scale_b[column block][kb] * (the e4m3 products of block kb).
// The scales change from one 128-wide K block to the next, so the kernel cannot let the tensor
// cores run through all of K: it takes K in slices of exactly one scale block (128 e4m3, 128-byte
// rows like lesson 15's 64 bf16), lets wgmma sum each slice into a scratch accumulator, and then
// "promotes" that sum into the fp32 accumulator on the CUDA cores, multiplied by the two scales.
// That promotion does a second service: the tensor cores add fp8 products with fewer bits than
// fp32 keeps (about 13 below the leading bit; the README), so the error of their sums stays
// confined to 128 products.
//
// Two scratch sums take turns, so that the tensor cores multiply the next slice while the CUDA
// cores promote this one. Everything else is lesson 15's kernel in lesson 16's 128-wide tiles: the
// warp-specialized producer (its loads now also bring A's scales), cooperative consumers, clusters
// that multicast B, the persistent grid in grouped order, and the TMA-store epilogue; lesson 16's
// cost model chooses among three configurations. (No Stream-K: a split tile's parts would each
// need the promotion's fp32 sums, which is lesson 14's fixup again; the README measures what the
// data-parallel schedule leaves.)
// Graded instruction signature: QGMMA UTMALDG.2D.MULTICAST UTMASTG USETMAXREG
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include "common/gemm.hpp"
#include "common/hopper/cluster_pipeline.hpp"
#include "common/hopper/epilogue_tile_shape.hpp"
#include "common/hopper/kstep_descriptor.hpp"
#include "common/hopper/persistent_tiles.hpp"
#include "common/hopper/producer_tail.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/cluster.hpp"
#include "common/ptx/setmaxnreg.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/machine_costs.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/schedule/shape_model.hpp"
#include "common/shared_memory.hpp"
#include "common/tensor_map.hpp"
#include "lessons/15_tma_store_epilogue/kernel.cuh"

namespace lesson18 {

using gemm::e4m3;
using gemm::taught::PersistentClusterTiles;  // lesson 13's data-parallel persistent schedule

// NEW in lesson 18: K per slice is one scale block: 128 e4m3, a 128-byte row of shared memory like
// lesson 15's 64 bf16, so the ring, the swizzle and the descriptors are lesson 15's, byte for byte.
constexpr int kSliceK = gemm::BlockScaledOperands::kBlock;
static_assert(kSliceK * sizeof(e4m3) == gemm::hopper::kBlockK * sizeof(gemm::bf16),
              "an e4m3 slice has the bytes of a bf16 one");
// The fp8 wgmma multiplies 32 values of K per instruction: 32 bytes, like bf16's 16, so lesson
// 07's kstep_descriptor (32 bytes a step) serves as it is. 4 per slice.
constexpr int kMmaK = 32;
constexpr int kKSteps = kSliceK / kMmaK;

// NEW in lesson 18: lesson 15's shared storage (the ring of operand slices, the pipeline, the
// work queue, the epilogue's subtile buffers) and, for each stage, A's scales of the stage's slice:
// one per row of the tile, loaded by TMA with the slice, on the same full barrier.
template <class Tile>
struct SharedStorage {
  lesson15::SharedStorage<Tile> gemm;
  alignas(128) float a_scales[Tile::kStages][Tile::kBlockM];
};

// The tiles: lesson 16's 128 x 128 (two consumers of 64 rows) and 64 x 128 (one), with as many
// stages as fit next to the epilogue's buffers and the scales. Wider tiles do not fit: each
// consumer thread holds BlockN / 2 fp32 accumulators and twice as many for the slices' scratch
// sums (below). 128 columns also keep a tile inside one block of B's scales.
constexpr int kMostStages = 8;
template <int BlockM, int ClusterM, int Stages = kMostStages>
constexpr int stages_that_fit() {
  using Storage = SharedStorage<gemm::taught::TileShape<BlockM, 128, ClusterM, Stages>>;
  if constexpr (sizeof(Storage) + gemm::kSharedAlignment <= gemm::kMaxSharedBytesPerBlock ||
                Stages == 2)
    return Stages;
  else
    return stages_that_fit<BlockM, ClusterM, Stages - 1>();
}
template <int BlockM, int ClusterM>
using TileShape = gemm::taught::TileShape<BlockM, 128, ClusterM, stages_that_fit<BlockM, ClusterM>()>;
// The README's table: 5 stages of 32.5 KB at 128 x 128, 8 of 24.25 KB at 64 x 128.
static_assert(TileShape<128, 2>::kStages == 5 && TileShape<64, 1>::kStages == 8);

constexpr int kBlocksPerSm = 1;
constexpr int kProducerRegisters = 40;
template <class Tile>
GEMM_HOST_DEVICE constexpr uint32_t consumer_registers() {
  return gemm::hopper::consumer_registers(Tile::kThreads, kBlocksPerSm, kProducerRegisters);
}
constexpr int kWorkQueueDepth = lesson15::kWorkQueueDepth;

// NEW in lesson 18: the producer's loop over a tile's slices (lesson 12's, with one more load):
// A's slice, this block's part of B's slice multicast to the cluster, and A's scales for the
// slice's rows, one box of BlockM floats from the row of the slice's K block. The full barrier
// counts all of their bytes.
template <class Tile, class Pipeline>
__device__ inline void load_scaled_slices(Pipeline& pipeline, SharedStorage<Tile>& shared,
                                          const CUtensorMap& a_map, const CUtensorMap& b_map,
                                          const CUtensorMap& a_scale_map, int row0, int col0,
                                          uint32_t rank, int k_slices,
                                          gemm::PipelineState<Tile::kStages>& state) {
  constexpr uint32_t kBytes = Tile::kStageBytes + Tile::kBlockM * sizeof(float);
  auto& ring = shared.gemm.ring;
  for (int slice = 0; slice < k_slices; ++slice) {
    pipeline.producer_acquire(state, kBytes);
    uint64_t* full = pipeline.full_barrier(state);
    gemm::ptx::tma_load_2d(ring.a[state.index], &a_map, full, slice * kSliceK, row0);
    // (The ring counts in bf16: a row of kBlockK of them is one of kSliceK e4m3.)
    gemm::bf16* b_slice = ring.b[state.index] + rank * Tile::kBSliceRows * Tile::kBlockK;
    const uint16_t every_block = (1u << Tile::kClusterM) - 1;
    gemm::ptx::tma_load_2d_multicast(b_slice, &b_map, full, slice * kSliceK,
                                     col0 + int(rank) * Tile::kBSliceRows, every_block);
    gemm::ptx::tma_load_2d(shared.a_scales[state.index], &a_scale_map, full, row0, slice);
    state.advance();
  }
}

// NEW in lesson 18: the index in b_scales of the scale of B's 128 x 128 block that holds the
// tile's columns col0 .. col0 + 127 in K block `slice`.
GEMM_HOST_DEVICE inline int64_t b_scale_index(int col0, int slice, int64_t b_scale_stride) {
  // BEGIN EXERCISE(b_scale_block, returns): the index of the scale of B's 128 x 128 block that
  //   holds column col0 in K block `slice` (the layout of gemm::BlockScaledOperands::b_scales)
  return int64_t(col0 / gemm::BlockScaledOperands::kBlock) * b_scale_stride + slice;
  // END EXERCISE
}

// The scales of one slice for this thread's two rows: A's scale of the row times B's scale.
struct SliceScales {
  float upper, lower;
};

// NEW in lesson 18: waits for slice `slice` in the stage of `state`, reads its scales, and starts
// its wgmmas into `sum`: 4 of K = 32, the first overwriting (scale-d = 0), committed as one group.
// This thread's values are rows upper_row and upper_row + 8 of the tile (common/ptx/wgmma.hpp).
template <class Tile, class Pipeline>
__device__ inline SliceScales start_slice(Pipeline& pipeline, SharedStorage<Tile>& shared,
                                          float (&sum)[Tile::kBlockN / 2], int first_row,
                                          int upper_row, float b_scale,
                                          const gemm::PipelineState<Tile::kStages>& state) {
  pipeline.consumer_wait(state);
  const SliceScales scales{shared.a_scales[state.index][upper_row] * b_scale,
                           shared.a_scales[state.index][upper_row + 8] * b_scale};
  const auto* a_rows = shared.gemm.ring.a[state.index] + first_row * Tile::kBlockK;
  const auto* b_tile = shared.gemm.ring.b[state.index];
  gemm::ptx::warpgroup_fence_operand(sum);
  gemm::ptx::wgmma_fence();
#pragma unroll
  for (int step = 0; step < kKSteps; ++step)
    gemm::ptx::wgmma_m64k32_e4m3<Tile::kBlockN>(
        sum, gemm::taught::kstep_descriptor(a_rows, step),
        gemm::taught::kstep_descriptor(b_tile, step), /*accumulate=*/step > 0);
  gemm::ptx::wgmma_commit_group();
  return scales;
}

// NEW in lesson 18: the promotion: the slice's sum, in fp32 registers, added into the
// accumulators with the slice's scales. Accumulators 4j, 4j + 1 are this thread's upper row,
// 4j + 2, 4j + 3 its lower row (common/ptx/wgmma.hpp).
template <int N>
__device__ inline void promote(float (&accumulator)[N / 2], const float (&sum)[N / 2],
                               const SliceScales& scales) {
  // BEGIN EXERCISE(promotion): add the slice's sum into the accumulators, each value multiplied
  //   by the scales of its row
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
    accumulator[4 * j + 0] += scales.upper * sum[4 * j + 0];
    accumulator[4 * j + 1] += scales.upper * sum[4 * j + 1];
    accumulator[4 * j + 2] += scales.lower * sum[4 * j + 2];
    accumulator[4 * j + 3] += scales.lower * sum[4 * j + 3];
  }
  // END EXERCISE
}

// NEW in lesson 18: finishes the oldest started slice, whose sum is in `sum`: waits until at most
// Pending wgmma groups (those of the slices started after it) still run, so that its wgmmas are
// complete and done reading its stage; gives the stage back to the producer (every consumer warp
// arrives on its empty barrier); promotes the sum.
template <int Pending, class Tile, class Pipeline>
__device__ inline void finish_slice(Pipeline& pipeline, float (&accumulator)[Tile::kBlockN / 2],
                                    float (&sum)[Tile::kBlockN / 2], const SliceScales& scales,
                                    gemm::PipelineState<Tile::kStages>& read_state) {
  gemm::ptx::wgmma_wait_group<Pending>();
  gemm::ptx::warpgroup_fence_operand(sum);
  pipeline.consumer_release(read_state);
  read_state.advance();
  promote<Tile::kBlockN>(accumulator, sum, scales);
}

// NEW in lesson 18: one consumer's slices of a tile, into its accumulators (zeroed first). The
// scales change from slice to slice, so each slice is summed apart, then promoted. Two scratch
// sums take turns, so that the tensor cores multiply slice s + 1 while the CUDA cores promote
// slice s: start slice s + 1, wait until only its group is pending (slice s is complete, and done
// reading its stage), release slice s's stage, promote slice s.
template <class Tile, class Pipeline>
__device__ inline void mma_promote_slices(Pipeline& pipeline, SharedStorage<Tile>& shared,
                                          float (&accumulator)[Tile::kBlockN / 2],
                                          float (&even_sum)[Tile::kBlockN / 2],
                                          float (&odd_sum)[Tile::kBlockN / 2], int first_row,
                                          const float* b_scales, int col0, int k_slices,
                                          int64_t b_scale_stride,
                                          gemm::PipelineState<Tile::kStages>& read_state) {
  const int thread = threadIdx.x % 128;
  const int upper_row = first_row + (thread / 32) * 16 + (thread % 32) / 4;
  // B's scale of a slice: the same for the whole tile.
  const auto b_scale = [&](int slice) {
    return __ldg(b_scales + b_scale_index(col0, slice, b_scale_stride));
  };
#pragma unroll
  for (int i = 0; i < Tile::kBlockN / 2; ++i) accumulator[i] = 0.0f;
  SliceScales even_scales =
      start_slice<Tile>(pipeline, shared, even_sum, first_row, upper_row, b_scale(0), read_state);
  SliceScales odd_scales{};
  auto state = read_state;  // the newest started slice's stage
  int slice = 0;
  for (; slice + 2 < k_slices; slice += 2) {  // slices slice and slice + 1, both followed by more
    state.advance();
    odd_scales = start_slice<Tile>(pipeline, shared, odd_sum, first_row, upper_row,
                                   b_scale(slice + 1), state);
    finish_slice</*Pending=*/1, Tile>(pipeline, accumulator, even_sum, even_scales, read_state);
    state.advance();
    even_scales = start_slice<Tile>(pipeline, shared, even_sum, first_row, upper_row,
                                    b_scale(slice + 2), state);
    finish_slice</*Pending=*/1, Tile>(pipeline, accumulator, odd_sum, odd_scales, read_state);
  }
  if (slice + 1 < k_slices) {  // the last two slices
    state.advance();
    odd_scales = start_slice<Tile>(pipeline, shared, odd_sum, first_row, upper_row,
                                   b_scale(slice + 1), state);
    finish_slice</*Pending=*/1, Tile>(pipeline, accumulator, even_sum, even_scales, read_state);
    finish_slice</*Pending=*/0, Tile>(pipeline, accumulator, odd_sum, odd_scales, read_state);
  } else {  // the last slice
    finish_slice</*Pending=*/0, Tile>(pipeline, accumulator, even_sum, even_scales, read_state);
  }
}

template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, kBlocksPerSm)
    gemm_kernel(int m, int n, const __grid_constant__ CUtensorMap a_map,
                const __grid_constant__ CUtensorMap b_map,
                const __grid_constant__ CUtensorMap a_scale_map,
                const __grid_constant__ CUtensorMap d_map, const float* b_scales, int k_slices,
                int b_scale_stride, int raster_group) {
  static_assert(Tile::kRowBlocks == 1 && Tile::kBlockN == gemm::BlockScaledOperands::kBlock,
                "a consumer computes one 64-row block; a tile's columns are one block of B");
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);
  auto& pipeline = shared.gemm.pipeline;
  auto& queue = shared.gemm.queue;

  const uint32_t rank = gemm::ptx::cluster_cta_rank();
  const PersistentClusterTiles<Tile> schedule{
      gemm::ptx::cluster_id_x(), gridDim.x / Tile::kClusterM,
      gemm::ceil_div(m, Tile::kBlockM * Tile::kClusterM), gemm::ceil_div(n, Tile::kBlockN),
      raster_group, k_slices, rank};
  const int warpgroup = threadIdx.x / 128;

  // Thread 0 sets up the barriers (lessons 09, 12 and 13); the cluster barrier makes them visible
  // to both blocks.
  if (threadIdx.x == 0) {
    gemm::ptx::prefetch_tensor_map(&a_map);
    gemm::ptx::prefetch_tensor_map(&b_map);
    gemm::ptx::prefetch_tensor_map(&a_scale_map);
    gemm::ptx::prefetch_tensor_map(&d_map);
    queue.init(/*consumer_warps=*/Tile::kConsumers * 4);
    pipeline.init(/*consumer_warps=*/Tile::kConsumers * 4);
  }
  gemm::ptx::cluster_sync();

  if (warpgroup == 0) {
    // ---- Producer warpgroup: registers down; one thread posts every tile and loads it. ----
    gemm::ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) {
      auto write_state = gemm::PipelineState<Tile::kStages>::producer_start();
      for (int64_t i = 0; i < schedule.count(); ++i) {
        const gemm::hopper::WorkItem item = schedule.item(i);
        lesson15::post_item<Tile, lesson15::PlainEpilogue>(shared.gemm, i, item);
        load_scaled_slices<Tile>(pipeline, shared, a_map, b_map, a_scale_map, item.row0,
                                 item.col0, rank, k_slices, write_state);
      }
      lesson15::post_item<Tile, lesson15::PlainEpilogue>(shared.gemm, schedule.count(),
                                                         gemm::hopper::WorkItem{});  // the end
      gemm::taught::producer_tail(pipeline, write_state);  // lesson 12: before this block exits
    }
    return;
  }

  // ---- Consumer warpgroups: registers up; each its 64 rows of every tile (lesson 10). ----
  gemm::ptx::setmaxnreg_inc<consumer_registers<Tile>()>();
  const int consumer = warpgroup - 1;
  const int first_row = consumer * Tile::kConsumerRows;
  float accumulator[1][Tile::kBlockN / 2];
  float even_sum[Tile::kBlockN / 2], odd_sum[Tile::kBlockN / 2];  // the slices' scratch sums
  int stored = 0;
  auto read_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  auto receive_state = gemm::PipelineState<kWorkQueueDepth>::consumer_start();
  while (true) {
    const gemm::hopper::WorkItem item = queue.receive(receive_state);
    if (item.is_end()) break;
    mma_promote_slices<Tile>(pipeline, shared, accumulator[0], even_sum, odd_sum, first_row,
                             b_scales, item.col0, k_slices, b_scale_stride, read_state);
    // Lesson 15's epilogue: stmatrix into swizzled subtiles, TMA stores.
    lesson15::store_item<Tile, lesson15::PlainEpilogue>(
        shared.gemm, d_map, accumulator, consumer, item,
        lesson15::EpilogueParams{/*alpha=*/1, /*beta=*/0, /*bias=*/nullptr}, stored++);
  }
  lesson15::store_tail();
}

// How many clusters of this configuration fit on the GPU at once: the persistent grid's size.
template <class Tile>
int64_t resident_workers() {
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile>>(shared_bytes);
  return gemm::resident_clusters<gemm_kernel<Tile>>(Tile::kClusterM, Tile::kThreads, shared_bytes);
}

template <class Tile, int RasterGroup = 8>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  using gemm::MapElement;
  const auto& fp8 = args.fp8;
  // NEW in lesson 18: the operands' maps hold e4m3: boxes of kSliceK values (128 bytes, the
  // 128-byte swizzle's span) by the tile's rows; past K, M or N, TMA fills zeros, and a zero e4m3
  // adds nothing to a sum.
  const CUtensorMap a_map = gemm::make_tensor_map(
      fp8.a, gemm::kmajor_tile_map_args(MapElement::e4m3, p.m, p.k, Tile::kBlockM, kSliceK));
  const CUtensorMap b_map = gemm::make_tensor_map(
      fp8.b, gemm::kmajor_tile_map_args(MapElement::e4m3, p.n, p.k, Tile::kBSliceRows, kSliceK));
  // NEW in lesson 18: A's scales, a matrix of k_blocks rows of scale_rows(M) floats, read one
  // K block's row by BlockM floats at a time, unswizzled.
  const int64_t k_blocks = gemm::BlockScaledOperands::k_blocks(p.k);
  const CUtensorMap a_scale_map = gemm::make_tensor_map(
      fp8.a_scales,
      gemm::kmajor_tile_map_args(MapElement::fp32, k_blocks,
                                 gemm::BlockScaledOperands::scale_rows(p.m), 1, Tile::kBlockM,
                                 CU_TENSOR_MAP_SWIZZLE_NONE));
  const CUtensorMap d_map = gemm::make_tensor_map(
      args.d, gemm::kmajor_tile_map_args(p.m, p.n, Tile::kSubtileRows, Tile::kSubtileColumns));
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile>>(shared_bytes);
  const int64_t cluster_tiles = gemm::ceil_div<int64_t>(p.m, Tile::kBlockM * Tile::kClusterM) *
                                gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  const int64_t workers = std::min(resident_workers<Tile>(), cluster_tiles);
  gemm::launch_with_clusters(gemm_kernel<Tile>, unsigned(workers * Tile::kClusterM),
                             Tile::kClusterM, Tile::kThreads, shared_bytes, gemm::Residency::any,
                             stream, int(p.m), int(p.n), a_map, b_map, a_scale_map, d_map,
                             fp8.b_scales, int(k_blocks),
                             int(gemm::BlockScaledOperands::b_scale_stride(p.k)), RasterGroup);
}

// NEW in lesson 18: the configurations, and lesson 16's cost model to choose among them. An fp8
// slice of 128 values of K has the bytes of a bf16 slice of 64, and the tensor cores take it in
// the same time (twice the multiply-adds at twice the rate): for the model, an fp8 problem is the
// bf16 problem of half its K, in the model's bf16 units throughout (its DRAM bytes included).
// (Stream-K's threshold of the model's plan: never, the grid is data-parallel.)
constexpr int64_t kNoStreamK = std::numeric_limits<int>::max();
template <int BlockM, int ClusterM>
struct Config {
  using Tile = TileShape<BlockM, ClusterM>;
  static constexpr gemm::taught::KernelShape kShape{BlockM, 128, ClusterM, kNoStreamK};
  static void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
    launch_tile<Tile>(args, stream);
  }
  static int64_t workers() { return resident_workers<Tile>(); }
};

struct Entry {
  gemm::Configuration configuration;
  gemm::taught::KernelShape shape;
  int64_t (*workers)();
};
template <class C>
constexpr Entry entry(const char* name) {
  return {{name, &C::launch, nullptr, nullptr}, C::kShape, &C::workers};
}
constexpr int kConfigurationCount = 3;
inline constexpr Entry kEntries[kConfigurationCount] = {
    entry<Config<128, 2>>("128x128_c2"),
    entry<Config<128, 1>>("128x128_c1"),
    entry<Config<64, 1>>("64x128_c1"),
};
inline constexpr std::array<gemm::Configuration, kConfigurationCount> kConfigurations = {
    kEntries[0].configuration, kEntries[1].configuration, kEntries[2].configuration};

inline int chosen_configuration(const gemm::GemmProblem& problem) {
  gemm::taught::KernelShape shapes[kConfigurationCount];
  int64_t workers[kConfigurationCount];
  for (int i = 0; i < kConfigurationCount; ++i) {
    shapes[i] = kEntries[i].shape;
    workers[i] = kEntries[i].workers();
  }
  const gemm::GemmProblem bf16_equivalent{problem.m, problem.n, gemm::ceil_div<int64_t>(problem.k, 2)};
  return gemm::taught::choose_configuration(shapes, workers, kConfigurationCount, bf16_equivalent,
                                        gemm::taught::costs_on_this_gpu());
}

inline void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
  kEntries[chosen_configuration(args.problem)].configuration.launch(args, stream);
}

inline constexpr gemm::Lesson kLesson{
    .id = 18,
    .parent = 16,
    .slug = "fp8_block_scaled",
    .title = "e4m3 operands with 1x128 / 128x128 fp32 block scales, promoted every 128 values of K",
    .launch = &launch,
    .workspace_bytes = nullptr,
    .min_arch = gemm::MinArch::sm90a,
    .configurations = kConfigurations.data(),
    .configuration_count = kConfigurationCount,
    .chosen_configuration = &chosen_configuration,
    .operands = gemm::Operands::e4m3_block_scaled,
};

}  // namespace lesson18
