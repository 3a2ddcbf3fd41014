// Lesson 18 (a supplement past the ladder): fp8 operands with fine-grained block scaling.
//
// Hopper's tensor cores multiply e4m3 (8-bit floats: 4 exponent bits, 3 mantissa bits, at most
// 448) at twice the rate of bf16, and an e4m3 operand is half the bytes. e4m3 alone cannot hold a
// matrix whose values span many orders of magnitude, so each block of values is divided by a
// scale of its own before it is rounded to e4m3 (common/fp8/fp8_block_scaling.hpp): one fp32 scale
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
// cores promote this one. The lesson is a mainloop: everything else is the final kernel of lesson
// 15 (the warp-specialized producer, whose loads now also bring A's scales, cooperative consumers,
// B's loads multicast to the cluster, the persistent grid in grouped order, and the TMA-store
// epilogue), in 128-wide tiles, among which lesson 16's cost model chooses.
// Graded instruction signature: QGMMA UTMALDG.2D.MULTICAST UTMASTG USETMAXREG
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "common/gemm.hpp"
#include "common/hopper/bf16_configurations.hpp"
#include "common/hopper/epilogue_quantizing.hpp"
#include "common/hopper/gemm_kernel.cuh"
#include "common/hopper/kernel_tile.hpp"
#include "common/hopper/tile_scheduler.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/hopper/work_item.hpp"
#include "common/lesson.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/kernel_shape.hpp"
#include "common/schedule/machine_costs.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/schedule/shape_model.hpp"
#include "common/tensor_map.hpp"
#include "common/wgmma_descriptor.hpp"

namespace lesson18 {

// NEW in lesson 18: the e4m3 mainloop, a piece of the final kernel with the members of the bf16
// one (common/hopper/mainloop_bf16.hpp).
// BEGIN TEACHING COPY(BlockScaledMainloop)
struct BlockScaledMainloop {
  // K per slice is one scale block: 128 e4m3, a 128-byte row of shared memory like a slice of 64
  // bf16, so the ring, the swizzle and the descriptors are the bf16 mainloop's, byte for byte.
  static constexpr int kSliceK = gemm::BlockScaledOperands::kBlock;
  static constexpr int kOperandBytes = int(sizeof(gemm::e4m3));
  static_assert(kSliceK * sizeof(gemm::e4m3) == gemm::hopper::kBlockK * sizeof(gemm::bf16),
                "an e4m3 slice has the bytes of a bf16 one");
  // The fp8 wgmma multiplies 32 values of K per instruction: 32 bytes, like bf16's 16, so a
  // k-step moves the descriptors by lesson 07's 32 bytes. 4 per slice.
  static constexpr int kMmaK = 32;
  static constexpr int kKSteps = kSliceK / kMmaK;
  static constexpr uint32_t kStepBytes = kMmaK * kOperandBytes;

  // The operand ring (it counts in bf16: a row of kBlockK of them is one of kSliceK e4m3) and,
  // for each stage, A's scales of the stage's slice: one per row of the tile, loaded by TMA with
  // the slice, on the same full barrier.
  template <class Tile>
  struct Ring {
    gemm::hopper::OperandRing<Tile> operands;
    alignas(128) float a_scales[Tile::kStages][Tile::kBlockM];
  };

  struct Params {
    CUtensorMap a_map, b_map, a_scale_map;
    const float* b_scales;
    int b_scale_stride;
    uint32_t stage_bytes;  // what a stage's loads deliver to each block: A's box, B's, A's scales
  };

  static int64_t k_slices(int64_t k) { return gemm::BlockScaledOperands::k_blocks(k); }

  // The operands' maps hold e4m3: boxes of kSliceK values (128 bytes, the 128-byte swizzle's span)
  // by the tile's rows; past K, M or N, TMA fills zeros, and a zero e4m3 adds nothing to a sum.
  // A's scales are a matrix of k_blocks rows of scale_rows(M) floats, read one K block's row by
  // BlockM floats at a time, unswizzled. Where A has fewer rows than a tile (a decode step), A's
  // boxes and its scales' are shorter (gemm::operand_box_rows, as in the bf16 mainloop).
  template <class Tile>
  static Params make_params(const gemm::GemmArgs& args) {
    using gemm::MapElement;
    const auto& p = args.problem;
    const auto& fp8 = args.fp8;
    const int a_box_rows = gemm::operand_box_rows(p.m, Tile::kBlockM);
    const int b_bytes = Tile::kBlockN * kSliceK * kOperandBytes;
    return {gemm::make_tensor_map(fp8.a, gemm::kmajor_tile_map_args(MapElement::e4m3, p.m, p.k,
                                                                    a_box_rows, kSliceK)),
            gemm::make_tensor_map(fp8.b, gemm::kmajor_tile_map_args(MapElement::e4m3, p.n, p.k,
                                                                    Tile::kBSliceRows, kSliceK)),
            gemm::make_tensor_map(
                fp8.a_scales,
                gemm::kmajor_tile_map_args(MapElement::fp32, k_slices(p.k),
                                           gemm::BlockScaledOperands::scale_rows(p.m), 1,
                                           a_box_rows, CU_TENSOR_MAP_SWIZZLE_NONE)),
            fp8.b_scales, int(gemm::BlockScaledOperands::b_scale_stride(p.k)),
            uint32_t(a_box_rows * kSliceK * kOperandBytes + b_bytes + a_box_rows * sizeof(float))};
  }

  // The index in b_scales of the scale of B's 128 x 128 block that holds the tile's columns
  // col0 .. col0 + 127 in K block `slice`.
  GEMM_HOST_DEVICE static int64_t b_scale_index(int col0, int slice, int64_t b_scale_stride) {
    // BEGIN EXERCISE(b_scale_block, returns): the index of the scale of B's 128 x 128 block that
    //   holds column col0 in K block `slice` (the layout of gemm::BlockScaledOperands::b_scales)
    return int64_t(col0 / gemm::BlockScaledOperands::kBlock) * b_scale_stride + slice;
    // END EXERCISE
  }

#if defined(__CUDACC__)
  // Nothing is pending after a tile's MMAs: each slice is finished (and its stage released) before
  // its sum is promoted.
  template <class Tile>
  struct Pending {};

  __device__ static void prefetch(const Params& params) {
    gemm::ptx::prefetch_tensor_map(&params.a_map);
    gemm::ptx::prefetch_tensor_map(&params.b_map);
    gemm::ptx::prefetch_tensor_map(&params.a_scale_map);
  }

  // The producer's loop over an item's slices (lesson 12's, with one more load): A's slice, this
  // block's part of B's slice multicast to the cluster, and A's scales for the slice's rows, one
  // box of BlockM floats (or of A's box's rows) from the row of the slice's K block. The full
  // barrier counts all of their bytes (params.stage_bytes).
  template <class Tile, class Pipeline>
  __device__ static void load(Pipeline& pipeline, Ring<Tile>& ring, const Params& params,
                              const gemm::hopper::WorkItem& item, uint32_t rank,
                              gemm::PipelineState<Tile::kStages>& state) {
    for (int slice = item.k_begin; slice < item.k_end; ++slice) {
      pipeline.producer_acquire(state, params.stage_bytes);
      uint64_t* full = pipeline.full_barrier(state);
      gemm::ptx::tma_load_2d(ring.operands.a[state.index], &params.a_map, full, slice * kSliceK,
                             item.row0);
      gemm::bf16* b_slice = ring.operands.b[state.index] + rank * Tile::kBSliceRows * Tile::kBlockK;
      const uint16_t every_block = (1u << Tile::kClusterM) - 1;
      gemm::ptx::tma_load_2d_multicast(b_slice, &params.b_map, full, slice * kSliceK,
                                       item.col0 + int(rank) * Tile::kBSliceRows, every_block);
      gemm::ptx::tma_load_2d(ring.a_scales[state.index], &params.a_scale_map, full, item.row0,
                             slice);
      state.advance();
    }
  }

  // The scales of one slice for this thread's two rows, as the promotion takes them: A's scale of
  // the row times B's scale.
  struct SliceScales {
    float upper, lower;
  };

  // What a started slice keeps of its scales until its promotion: A's for the two rows, read from
  // its stage (given back before the promotion), and B's. They are multiplied at the promotion, not
  // at the start: B's scale comes from global memory, and a product taken at the start would hold
  // the slice's last wgmma until that load lands.
  struct StartedScales {
    float a_upper, a_lower, b;
  };

  // Waits for the slice in the stage of `state`, reads its scales, and starts its wgmmas into
  // `sum`: kKSteps of K = 32, the first overwriting (scale-d = 0), committed as one group. This
  // thread's values are rows upper_row and upper_row + 8 of the tile (common/ptx/wgmma.hpp).
  template <class Tile, class Pipeline>
  __device__ static StartedScales start_slice(Pipeline& pipeline, const Ring<Tile>& ring,
                                              float (&sum)[Tile::kBlockN / 2], int first_row,
                                              int upper_row, float b_scale,
                                              const gemm::PipelineState<Tile::kStages>& state) {
    pipeline.consumer_wait(state);
    const StartedScales scales{ring.a_scales[state.index][upper_row],
                               ring.a_scales[state.index][upper_row + 8], b_scale};
    // NEW in lesson 18: each operand's descriptor encoded once per slice, and each k-step's by
    // adding its offset (gemm::advance_descriptor). The consumer's instructions, not the tensor
    // cores, set this loop's pace (the README's profile): encoding both descriptors of every wgmma
    // afresh, as lessons 07-17 do, took 6-7% of the time at 4096^3 and 8192^3.
    const uint64_t a_slice = gemm::make_kmajor_sw128_descriptor(
        gemm::ptx::shared_address(ring.operands.a[state.index] + first_row * Tile::kBlockK));
    const uint64_t b_slice =
        gemm::make_kmajor_sw128_descriptor(gemm::ptx::shared_address(ring.operands.b[state.index]));
    gemm::ptx::warpgroup_fence_operand(sum);
    gemm::ptx::wgmma_fence();
#pragma unroll
    for (int step = 0; step < kKSteps; ++step)
      gemm::ptx::wgmma_m64k32_e4m3<Tile::kBlockN>(
          sum, gemm::advance_descriptor(a_slice, step * kStepBytes),
          gemm::advance_descriptor(b_slice, step * kStepBytes), /*accumulate=*/step > 0);
    gemm::ptx::wgmma_commit_group();
    return scales;
  }

  // The promotion: the slice's sum, in fp32 registers, added into the accumulators with the
  // slice's scales (common/ptx/wgmma.hpp says which accumulators are which row).
  template <int N>
  __device__ static void promote(float (&accumulator)[N / 2], const float (&sum)[N / 2],
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

  // Finishes the oldest started slice, whose sum is in `sum`: waits until at most Pending wgmma
  // groups (those of the slices started after it) still run, so that its wgmmas are complete and
  // done reading its stage; gives the stage back to the producer (every consumer warp arrives on
  // its empty barrier); promotes the sum.
  template <int PendingGroups, class Tile, class Pipeline>
  __device__ static void finish_slice(Pipeline& pipeline, float (&accumulator)[Tile::kBlockN / 2],
                                      float (&sum)[Tile::kBlockN / 2],
                                      const StartedScales& scales,
                                      gemm::PipelineState<Tile::kStages>& read_state) {
    gemm::ptx::wgmma_wait_group<PendingGroups>();
    gemm::ptx::warpgroup_fence_operand(sum);
    pipeline.consumer_release(read_state);
    read_state.advance();
    promote<Tile::kBlockN>(accumulator, sum,
                           SliceScales{scales.a_upper * scales.b, scales.a_lower * scales.b});
  }

  // One warpgroup's slices k_begin .. k_end - 1 of an item (at least one), into its accumulators
  // (zeroed first). The scales change from slice to slice, so each slice is summed apart, then
  // promoted. Two scratch sums take turns, so that the tensor cores multiply slice s + 1 while the
  // CUDA cores promote slice s: start slice s + 1, wait until only its group is pending (slice s
  // is complete, and done reading its stage), release slice s's stage, promote slice s.
  template <class Tile, class Pipeline>
  __device__ static Pending<Tile> issue_mmas(
      Pipeline& pipeline, const Ring<Tile>& ring, const Params& params,
      float (&accumulators)[Tile::kRowBlocks][Tile::kBlockN / 2], int first_row,
      const gemm::hopper::WorkItem& item, gemm::PipelineState<Tile::kStages>& read_state) {
    static_assert(Tile::kRowBlocks == 1 && Tile::kBlockN == gemm::BlockScaledOperands::kBlock,
                  "a warpgroup computes one 64-row block; a tile's columns are one block of B");
    float (&accumulator)[Tile::kBlockN / 2] = accumulators[0];
    float even_sum[Tile::kBlockN / 2], odd_sum[Tile::kBlockN / 2];  // the slices' scratch sums
    const int thread = threadIdx.x % 128;
    const int upper_row = first_row + (thread / 32) * 16 + (thread % 32) / 4;
    // B's scale of a slice: the same for the whole tile.
    const auto b_scale = [&](int slice) {
      return __ldg(params.b_scales + b_scale_index(item.col0, slice, params.b_scale_stride));
    };
#pragma unroll
    for (int i = 0; i < Tile::kBlockN / 2; ++i) accumulator[i] = 0.0f;
    StartedScales even_scales = start_slice<Tile>(pipeline, ring, even_sum, first_row, upper_row,
                                                  b_scale(item.k_begin), read_state);
    StartedScales odd_scales{};
    auto state = read_state;  // the newest started slice's stage
    int slice = item.k_begin;
    for (; slice + 2 < item.k_end; slice += 2) {  // slices slice and slice + 1, both followed by more
      state.advance();
      odd_scales = start_slice<Tile>(pipeline, ring, odd_sum, first_row, upper_row,
                                     b_scale(slice + 1), state);
      finish_slice<1, Tile>(pipeline, accumulator, even_sum, even_scales, read_state);
      state.advance();
      even_scales = start_slice<Tile>(pipeline, ring, even_sum, first_row, upper_row,
                                      b_scale(slice + 2), state);
      finish_slice<1, Tile>(pipeline, accumulator, odd_sum, odd_scales, read_state);
    }
    if (slice + 1 < item.k_end) {  // the last two slices
      state.advance();
      odd_scales = start_slice<Tile>(pipeline, ring, odd_sum, first_row, upper_row,
                                     b_scale(slice + 1), state);
      finish_slice<1, Tile>(pipeline, accumulator, even_sum, even_scales, read_state);
      finish_slice<0, Tile>(pipeline, accumulator, odd_sum, odd_scales, read_state);
    } else {  // the last slice
      finish_slice<0, Tile>(pipeline, accumulator, even_sum, even_scales, read_state);
    }
    return {};
  }

  template <class Tile, class Pipeline>
  __device__ static void drain(Pipeline&, float (&)[Tile::kRowBlocks][Tile::kBlockN / 2],
                               const Pending<Tile>&) {}
#endif
};
// END TEACHING COPY

// NEW in lesson 18: the epilogue, lesson 15's TMA store of bf16 D and, where the launch asks for
// them, D quantized as e4m3 for a next fp8 GEMM and its amax
// (common/hopper/epilogue_quantizing.hpp).
using gemm::hopper::QuantizingEpilogue;

// NEW in lesson 18: the configurations: the final kernel with this mainloop and the plain
// epilogue, in lesson 16's 128 x 128 tiles (two consumers of 64 rows) and 64 x 128 (one), with as
// many stages as fit next to the epilogue's buffers and the scales, data-parallel. Wider tiles do
// not fit: each consumer thread holds BlockN / 2 fp32 accumulators and twice as many for the
// slices' scratch sums. 128 columns also keep a tile inside one block of B's scales. Without
// clusters: one block alone measured faster than clusters of two at 12 of the 13 standard shapes
// (the README), and Stream-K's scheduler leaves the consumers too few registers (they spill).
template <int BlockM, int ClusterM>
struct Fp8Configuration {
  template <int Stages>
  using TileOf = gemm::hopper::KernelTile<BlockM, 128, ClusterM, Stages>;
  template <int Stages>
  using KernelOf =
      gemm::hopper::Kernel<TileOf<Stages>, BlockScaledMainloop, QuantizingEpilogue<TileOf<Stages>>,
                           gemm::hopper::DataParallelScheduler>;
  using Tile = TileOf<gemm::hopper::stages_that_fit<KernelOf>()>;
  using Plain = gemm::hopper::Configured<KernelOf<Tile::kStages>>;

  static constexpr gemm::KernelShape shape() { return Plain::kShape; }
  static void launch(const gemm::GemmArgs& args, const gemm::StreamKPlan& schedule,
                     cudaStream_t stream) {
    Plain::launch(args, schedule, stream);
  }
};
// The README's table: 5 stages of 32.5 KB at 128 x 128, 8 of 24.25 KB at 64 x 128.
static_assert(Fp8Configuration<128, 1>::Tile::kStages == 5 &&
              Fp8Configuration<64, 1>::Tile::kStages == 8);

inline constexpr gemm::taught::ConfigurationEntry kEntries[] = {
    gemm::taught::configuration_entry<Fp8Configuration<128, 1>>("128x128_c1"),
    gemm::taught::configuration_entry<Fp8Configuration<64, 1>>("64x128_c1"),
};
constexpr int kConfigurationCount = int(sizeof(kEntries) / sizeof(kEntries[0]));
inline constexpr std::array<gemm::Configuration, kConfigurationCount> kConfigurations = {
    kEntries[0].configuration, kEntries[1].configuration};

// NEW in lesson 18: fp8's own costs for lesson 16's model, which reads the data type from the
// configurations' shapes (slices of 128 values of one byte each): the tensor cores multiply e4m3
// at twice the rate of bf16; L2 and DRAM move bytes, whatever they hold.
inline gemm::taught::MachineCosts fp8_costs_on_this_gpu() {
  gemm::taught::MachineCosts costs = gemm::taught::costs_on_this_gpu();
  costs.macs_per_ns_per_sm *= 2;
  return costs;
}

inline gemm::LaunchPlan plan(const gemm::GemmProblem& problem, int configuration) {
  return gemm::taught::plan_among(kEntries, kConfigurationCount, problem, configuration,
                                  fp8_costs_on_this_gpu());
}

inline void launch_planned(const gemm::GemmArgs& args, const gemm::LaunchPlan& plan,
                           cudaStream_t stream) {
  kEntries[plan.configuration].launch(args, plan.schedule, stream);
}

inline constexpr gemm::Lesson kLesson{
    .min_arch = gemm::MinArch::sm90a,
    .plan = &plan,
    .launch_planned = &launch_planned,
    .configurations = kConfigurations.data(),
    .configuration_count = kConfigurationCount,
};

}  // namespace lesson18
