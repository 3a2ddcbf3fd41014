#pragma once
/// The final kernel's mainloop for bf16 operands (lessons 15-17, 19): the producer's loads and a
/// math warpgroup's MMAs over one work item's k-range, the loops that lessons 09 and 12 teach.
///
/// A mainloop is what common/hopper/gemm_kernel.cuh asks of its operands:
///   Ring<Tile>          the shared-memory stages the producer fills
///   Params              what its loads need (the operands' tensor maps), made on the host by
///                       make_params<Tile>(args)
///   k_slices(k)         the k-iterations of a tile: slices of kSliceK values of K
///   prefetch            the set-up thread fetches the tensor maps
///   load                the producer thread: the item's slices into the ring (every block of a
///                       cluster loads the same slices of its own tile; B is multicast)
///   issue_mmas          a math warpgroup: the item's MMAs into its accumulators, the first
///                       overwriting them; on return the last ones may still run (Pending)
///   drain               ... until they are complete and their stages released
/// Lesson 18's e4m3 mainloop has the same members.

#include <cstdint>

#include <cuda.h>

#include "common/gemm.hpp"
#include "common/hopper/consumer.hpp"
#include "common/hopper/load_k_range_multicast.hpp"
#include "common/hopper/mma_k_range.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/hopper/work_item.hpp"
#include "common/ptx/tma.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/tensor_map.hpp"

namespace gemm::hopper {

struct Bf16Mainloop {
  static constexpr int kSliceK = kBlockK;  // bf16 values of K per slice: 128-byte rows
  static constexpr int kOperandBytes = int(sizeof(bf16));

  template <class Tile>
  using Ring = OperandRing<Tile>;

  struct Params {
    CUtensorMap a_map, b_map;
    uint32_t stage_bytes;  // what a stage's loads deliver to each block: A's box and B's tile
  };

  static int64_t k_slices(int64_t k) { return ceil_div<int64_t>(k, kSliceK); }

  // A's boxes are the tile's rows, or A's rows where A has fewer (a decode step: M tokens of 1 to
  // 63 against 64- or 128-row tiles), rounded up to the swizzle's 8-row pattern
  // (operand_box_rows). TMA's zero fill of a box's rows past the end of A is slow: at M = 2 a
  // 64-row box made a 7168 x 4096 product 46% slower than at M = 64 (29.5 against 20.2 us, the
  // same bytes from DRAM; H200, Nsight Compute, 2026-11-28). B's boxes are what one block of a
  // cluster loads and multicasts.
  // In a cluster along N (lesson 16) A's boxes are the slice of the tile's rows that one block
  // loads and multicasts, and B's the tile's.
  template <class Tile>
  static Params make_params(const GemmArgs& args) {
    const auto& p = args.problem;
    if constexpr (Tile::kClusterN > 1)
      return {make_tensor_map(args.a, kmajor_tile_map_args(p.m, p.k, Tile::kASliceRows, kSliceK)),
              make_tensor_map(args.b, kmajor_tile_map_args(p.n, p.k, Tile::kBlockN, kSliceK)),
              uint32_t(Tile::kStageBytes)};
    const int a_box_rows = operand_box_rows(p.m, Tile::kBlockM);
    return {make_tensor_map(args.a, kmajor_tile_map_args(p.m, p.k, a_box_rows, kSliceK)),
            make_tensor_map(args.b, kmajor_tile_map_args(p.n, p.k, Tile::kBSliceRows, kSliceK)),
            uint32_t((a_box_rows + Tile::kBlockN) * kSliceK * kOperandBytes)};
  }

#if defined(__CUDACC__)
  // The last stage a warpgroup's MMAs read, still to be released.
  template <class Tile>
  using Pending = PipelineState<Tile::kStages>;

  __device__ static void prefetch(const Params& params) {
    ptx::prefetch_tensor_map(&params.a_map);
    ptx::prefetch_tensor_map(&params.b_map);
  }

  template <class Tile, class Pipeline>
  __device__ static void load(Pipeline& pipeline, Ring<Tile>& ring, const Params& params,
                              const WorkItem& item, uint32_t rank,
                              PipelineState<Tile::kStages>& state) {
    if constexpr (Tile::kClusterN > 1)
      load_k_range_multicast_a<Tile>(pipeline, ring, params, item, rank, state);
    else
      taught::load_k_range_multicast<Tile>(pipeline, ring, params.a_map, params.b_map, item.row0,
                                           item.col0, rank, item.k_begin, item.k_end, state,
                                           params.stage_bytes);
  }

  // Lesson 12's loop with the operands' roles exchanged, for a cluster along N (lesson 16): the
  // blocks share A's slice, each loading kASliceRows of its rows and multicasting them to every
  // block, and each loads its own B. Every block's full barrier counts the whole stage.
  template <class Tile, class Pipeline>
  __device__ static void load_k_range_multicast_a(Pipeline& pipeline, Ring<Tile>& ring,
                                                  const Params& params, const WorkItem& item,
                                                  uint32_t rank,
                                                  PipelineState<Tile::kStages>& state) {
    const uint16_t every_block = (1u << Tile::kClusterBlocks) - 1;
    for (int slice = item.k_begin; slice < item.k_end; ++slice) {
      pipeline.producer_acquire(state, params.stage_bytes);
      uint64_t* full = pipeline.full_barrier(state);
      bf16* a_slice = ring.a[state.index] + rank * Tile::kASliceRows * kSliceK;
      ptx::tma_load_2d_multicast(a_slice, &params.a_map, full, slice * kSliceK,
                                 item.row0 + int(rank) * Tile::kASliceRows, every_block);
      ptx::tma_load_2d(ring.b[state.index], &params.b_map, full, slice * kSliceK, item.col0);
      state.advance();
    }
  }

  template <class Tile, class Pipeline>
  __device__ static Pending<Tile> issue_mmas(
      Pipeline& pipeline, const Ring<Tile>& ring, const Params&,
      float (&accumulator)[Tile::kRowBlocks][Tile::kBlockN / 2], int first_row,
      const WorkItem& item, PipelineState<Tile::kStages>& read_state) {
    return taught::mma_k_range<Tile>(pipeline, ring, accumulator, first_row, item.k_begin,
                                     item.k_end, read_state);
  }

  template <class Tile, class Pipeline>
  __device__ static void drain(Pipeline& pipeline,
                               float (&accumulator)[Tile::kRowBlocks][Tile::kBlockN / 2],
                               const Pending<Tile>& pending) {
    mma_drain(pipeline, accumulator, pending);
  }
#endif
};

}  // namespace gemm::hopper
