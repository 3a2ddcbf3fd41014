#pragma once
/// The epilogue of lesson 16's decode tiles: a kernel with swapped operands computes D^T = B A^T
/// (its tile: BlockM columns of D, the weights' rows, on wgmma's M side, by BlockN rows of D, the
/// tokens, on its N side; common/hopper/kernel_tile.hpp), and this epilogue stores each 64 x BlockN
/// block of D^T into D as the BlockN x 64 block it is there.
///
/// Lesson 15's epilogue (common/hopper/epilogue_tma_store.hpp) with two differences:
///   - stmatrix.trans writes each 8 x 8 block of accumulators transposed, so a warpgroup's 64
///     columns of D land as rows of 128 bytes, one token each: a buffer is BlockN rows by 64
///     columns of D, in the 128-byte swizzle of the TMA store's box;
///   - the fused epilogue's C and bias come straight from global memory, by the thread that needs
///     them (a decode tile of C is a few KB, and its bias one value per row of D^T), so there is
///     no epilogue loader.
/// The values (alpha, beta, the bias, the activation) are lesson 15's, computed by its pair().

#include <cstdint>

#include <cuda.h>

#include "common/gemm.hpp"
#include "common/hopper/epilogue_tma_store.hpp"
#include "common/hopper/named_barriers.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/hopper/work_item.hpp"
#include "common/ptx/fence.hpp"
#include "common/ptx/named_barrier.hpp"
#include "common/ptx/stmatrix.hpp"
#include "common/ptx/tma.hpp"
#include "common/tensor_map.hpp"

namespace gemm::hopper {

template <class Tile, class Kind>
struct TransposedStoreEpilogue {
  using Lesson15 = taught::TmaStoreEpilogue<Tile, Kind>;
  static_assert(Tile::kSwapsOperands, "the transposed epilogue stores tiles of D^T");
  static_assert(!Tile::kPingPong, "the decode tiles are cooperative");
  static_assert(Tile::kBlockN % 16 == 0, "stmatrix.x4 stores the columns of D^T 16 at a time");

  // A buffer: BlockN rows of D (tokens) by the 64 columns of one warpgroup's block, 128-byte rows.
  static constexpr int kRowBytes = kWarpgroupM * int(sizeof(bf16));
  using Buffers = bf16[Tile::kMathWarpgroups][Tile::kEpilogueBuffers][Tile::kBlockN * kWarpgroupM];
  static_assert(Tile::kBlockN * kRowBytes % 1024 == 0,
                "each buffer starts 1024-byte aligned, as the 128-byte swizzle needs");
  struct SharedStorage {};
  // The kernel's loader thread has nothing to load.
  struct Loader {
    static constexpr int kThread = Lesson15::Loader::kThread;
  };

  struct Params {
    typename Lesson15::Params values;  // alpha, beta, the bias and the activation; D's map
    const bf16* c;                     // M x N, read where beta != 0
    int32_t m, n;                      // D's rows (tokens) and columns
  };

  // Lesson 15's values, with D's map cut in boxes of BlockN rows by 64 columns (128 bytes), the
  // 128-byte swizzle (lesson 15's maps of C and the bias are made, and unused).
  static Params make_params(const GemmArgs& args) {
    const auto& p = args.problem;
    Params params{Lesson15::make_params(args), args.epilogue.c, int32_t(p.m), int32_t(p.n)};
    params.values.d_map = make_tensor_map(
        args.d, kmajor_tile_map_args(p.m, p.n, Tile::kBlockN, kWarpgroupM,
                                     CU_TENSOR_MAP_SWIZZLE_128B));
    return params;
  }

#if defined(__CUDACC__)
  __device__ static void init(SharedStorage&, const Params& params) {
    ptx::prefetch_tensor_map(&params.values.d_map);
  }
  __device__ static void post(SharedStorage&, int64_t, const WorkItem&) {}
  __device__ static void load_inputs(SharedStorage&, Buffers&, const Params&) {}

  // A pair of bf16 from global memory (the low half first), zeros outside D.
  __device__ static uint32_t bf16_pair(const bf16* matrix, int64_t first, bool first_inside,
                                       int64_t second, bool second_inside) {
    const auto* bits = reinterpret_cast<const uint16_t*>(matrix);
    const uint32_t low = first_inside ? bits[first] : 0u;
    const uint32_t high = second_inside ? bits[second] : 0u;
    return low | (high << 16);
  }

  // One 64 x BlockN block of D^T, for math warpgroup `warpgroup`: columns n0 .. n0 + 63 of rows
  // t0 .. t0 + BlockN - 1 of D, through buffer `buffer` of the warpgroup:
  //   1. the buffer must be free: the storing thread waits until at most kEpilogueBuffers - 1 of
  //      its TMA stores may still read their buffers (the oldest of them read this one), then the
  //      warpgroup's barrier tells the other threads;
  //   2. every thread converts its accumulators (through lesson 15's fused epilogue) and
  //      stmatrix.trans writes them transposed into the buffer;
  //   3. every writing thread fences the async proxy, then the warpgroup's barrier: all of it is
  //      written;
  //   4. the storing thread starts the TMA store and commits it as a bulk group; nobody waits for
  //      it here.
  __device__ static void store_block(Buffers& buffers, const Params& params,
                                     const float (&accumulator)[Tile::kBlockN / 2], int warpgroup,
                                     int n0, int t0, int buffer_index) {
    const int thread = threadIdx.x % 128, lane = thread % 32, warp = thread / 32;
    const bool storer = thread == 0;
    const uint32_t barrier = kEpilogueBarrier + warpgroup;
    bf16* buffer = buffers[warpgroup][buffer_index];
    const uint32_t buffer_address = ptx::shared_address(buffer);
    if (storer) ptx::bulk_wait_group_read<Tile::kEpilogueBuffers - 1>();
    ptx::named_barrier_sync(barrier, 128);

    // The accumulators' layout (common/ptx/wgmma.hpp): warp w holds rows 16 w .. 16 w + 15 of the
    // block, lane l rows 16 w + l / 4 (upper) and 16 w + 8 + l / 4 (lower), and in each 8-column
    // block b the columns 8 b + 2 (l % 4) and 8 b + 2 (l % 4) + 1. One stmatrix.x4.trans stores
    // four 8 x 8 matrices: block 2 j's upper and lower rows, then block 2 j + 1's; transposed,
    // matrix q lands in buffer rows (tokens) 8 (2 j + q / 2) .. + 7, at the 16-byte chunk
    // 2 w + q % 2 (its 8 columns of D). Lane l gives the address of row l % 8 of matrix l / 8; the
    // swizzle XORs the chunk with the row's place in its 8-row pattern, which is l % 8.
    const int matrix = lane / 8;
    const uint32_t chunk_offset = uint32_t(((2 * warp + matrix % 2) ^ (lane % 8)) * 16);
    const int upper_column = n0 + 16 * warp + lane / 4;  // of D: this thread's upper row of D^T
    uint32_t bias_pairs[2] = {0, 0};                       // upper, lower: the bias twice
    const bool with_c = Lesson15::reads_c(params.values);
    if (Lesson15::reads_bias(params.values))
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int column = upper_column + 8 * half;
        bias_pairs[half] = bf16_pair(params.values.bias, column, column < params.n, column,
                                     column < params.n);
      }
#pragma unroll
    for (int pair_of_blocks = 0; pair_of_blocks < Tile::kBlockN / 16; ++pair_of_blocks) {
      const int row = 16 * pair_of_blocks + 8 * (matrix / 2) + lane % 8;
      uint32_t packed[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int block = 2 * pair_of_blocks + q / 2;
        const float* values = &accumulator[4 * block + 2 * (q % 2)];
        // C at (token, column) and (token + 1, column): the two values of this register.
        uint32_t c_pair = 0;
        if (with_c) {
          const int column = upper_column + 8 * (q % 2);
          const int token = t0 + 8 * block + 2 * (lane % 4);
          const bool column_inside = column < params.n;
          c_pair = bf16_pair(params.c, int64_t(token) * params.n + column,
                             column_inside && token < params.m,
                             int64_t(token + 1) * params.n + column,
                             column_inside && token + 1 < params.m);
        }
        packed[q] = Lesson15::pair(values[0], values[1], bias_pairs[q % 2], c_pair, params.values);
      }
      ptx::stmatrix_x4_trans(buffer_address + row * kRowBytes + chunk_offset, packed[0],
                             packed[1], packed[2], packed[3]);
    }

    ptx::fence_proxy_async_shared_cta();
    ptx::named_barrier_sync(barrier, 128);
    if (storer) {
      ptx::tma_store_2d(&params.values.d_map, buffer, n0, t0);
      ptx::bulk_commit_group();
    }
  }

  // The epilogue of one work item, for math warpgroup `warpgroup`, whose rows of the tile (of D^T)
  // start at first_row: each 64-row block by store_block, through the warpgroup's buffers in turn
  // (stored_by_warpgroup: the tiles it stored before this one).
  __device__ static void store_item(SharedStorage&, Buffers& buffers, const Params& params,
                                    const float (&accumulator)[Tile::kRowBlocks][Tile::kBlockN / 2],
                                    int warpgroup, int first_row, const WorkItem& item,
                                    int stored_by_warpgroup, int /*stored_by_block*/) {
#pragma unroll
    for (int r = 0; r < Tile::kRowBlocks; ++r)
      store_block(buffers, params, accumulator[r], warpgroup,
                  item.row0 + first_row + r * kWarpgroupM, item.col0,
                  (stored_by_warpgroup * Tile::kRowBlocks + r) % Tile::kEpilogueBuffers);
  }

  // As lesson 15's: each storing thread waits until its last TMA stores have read their buffers.
  __device__ static void tail() { Lesson15::tail(); }
#endif
};

}  // namespace gemm::hopper
