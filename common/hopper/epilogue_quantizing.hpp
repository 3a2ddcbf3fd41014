#pragma once
/// Lesson 18's epilogue for block-scaled e4m3 (lessons/18_fp8_block_scaled/README.md, "D for the
/// next layer"): lesson 15's TMA store of bf16 D and, where the launch asks for them
/// (GemmArgs::fp8_out), D quantized for a next fp8 GEMM and the largest magnitude of D
/// (gemm::BlockScaledOutput). A tile's 128 columns are exactly one 1 x 128 block of each of its
/// rows, so every block's amax is at hand in registers: the four threads that hold a row (a quad,
/// 32 values each) reduce it with two shuffles, each thread quantizes its own values, and the quad
/// trades them so that each lane stores 8 contiguous bytes; one thread of each quad stores the
/// row's scale. The values are D's as bf16 (the accumulators rounded as the TMA store's are), so
/// that the e4m3 D is the quantizer's of the bf16 D, bit for bit, and amax is max |D| exactly.
/// Each warp adds its largest magnitude to the launch's amax with one atomic max: a few per tile.

#include <cstdint>

#include <cuda_bf16.h>

#include "common/fp8/e4m3_rounding.hpp"
#include "common/gemm.hpp"
#include "common/hopper/epilogue_kind.hpp"
#include "common/hopper/epilogue_tma_store.hpp"
#include "common/hopper/work_item.hpp"

namespace gemm::hopper {

template <class Tile>
struct QuantizingEpilogue : gemm::taught::TmaStoreEpilogue<Tile, PlainEpilogue> {
  using Base = gemm::taught::TmaStoreEpilogue<Tile, PlainEpilogue>;
  using typename Base::Buffers;
  using typename Base::SharedStorage;
  static_assert(Tile::kBlockN == gemm::BlockScaledOperands::kBlock,
                "a tile's columns are one scale block of D's rows");

  struct Params : Base::Params {
    gemm::BlockScaledOutput out;
    int m, n;
    int64_t scale_rows;  // of out.d_scales: BlockScaledOperands::scale_rows(M)
  };

  static Params make_params(const gemm::GemmArgs& args) {
    const auto& p = args.problem;
    return {Base::make_params(args), args.fp8_out, int(p.m), int(p.n),
            gemm::BlockScaledOperands::scale_rows(p.m)};
  }

#if defined(__CUDACC__)
  __device__ static void store_item(SharedStorage& shared, Buffers& buffers, const Params& params,
                                    const float (&accumulator)[Tile::kRowBlocks][Tile::kBlockN / 2],
                                    int warpgroup, int first_row,
                                    const WorkItem& item, int stored_by_warpgroup,
                                    int stored_by_block) {
    Base::store_item(shared, buffers, params, accumulator, warpgroup, first_row, item,
                     stored_by_warpgroup, stored_by_block);
    if (params.out.d == nullptr && params.out.amax_bits == nullptr) return;
#pragma unroll
    for (int r = 0; r < Tile::kRowBlocks; ++r)
      quantize_rows(params, accumulator[r], item.row0 + first_row + r * Tile::kWarpgroupM,
                    item.col0);
  }

  // One 64-row block of the tile, rows row0 .. row0 + 63 and columns col0 .. col0 + 127 of D: this
  // thread's two rows, upper and upper + 8, 32 values each (common/ptx/wgmma.hpp's layout: value
  // 4j + h of a row pair is column 8j + 2 (lane % 4) + h % 2 of the upper row for h < 2, of the
  // lower one for h >= 2).
  __device__ static void quantize_rows(const Params& params,
                                       const float (&accumulator)[Tile::kBlockN / 2], int row0,
                                       int col0) {
    const int lane = threadIdx.x % 32;
    const int upper = row0 + (threadIdx.x % 128 / 32) * 16 + lane / 4;
    const int rows[2] = {upper, upper + 8};
    // D's values as the bf16 D holds them; rows past M hold whatever A's shorter box left in
    // shared memory (columns past N are zeros: B's box is whole), and count for nothing.
    float value[Tile::kBlockN / 2];
    float row_amax[2] = {0.0f, 0.0f};
#pragma unroll
    for (int i = 0; i < Tile::kBlockN / 2; ++i) {
      value[i] = __bfloat162float(__float2bfloat16_rn(accumulator[i]));
      row_amax[(i % 4) / 2] = fmaxf(row_amax[(i % 4) / 2], fabsf(value[i]));
    }
    float thread_amax = 0.0f;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // The quad's four threads hold the row's 128 columns.
      row_amax[h] = fmaxf(row_amax[h], __shfl_xor_sync(0xffffffffu, row_amax[h], 1));
      row_amax[h] = fmaxf(row_amax[h], __shfl_xor_sync(0xffffffffu, row_amax[h], 2));
      if (rows[h] < params.m) thread_amax = fmaxf(thread_amax, row_amax[h]);
    }
    if (params.out.d != nullptr) {
      const int quad_lane = lane % 4;
      float scale[2], inverse_scale[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        scale[h] = gemm::e4m3_scale_for(row_amax[h]);
        inverse_scale[h] = gemm::e4m3_inverse_scale(scale[h]);
        if (quad_lane == 0 && rows[h] < params.m)
          params.out.d_scales[int64_t(col0 / Tile::kBlockN) * params.scale_rows + rows[h]] =
              scale[h];
      }
      // A thread's e4m3 lie two by two, 8 columns apart: a store of each pair would write 2
      // bytes. So the quad trades them: of every 4 blocks of 8 columns, lane q of the quad gathers
      // block q's 8 bytes, 2 from each lane of the quad, and stores them at once (the quad writes
      // 32 contiguous bytes of a row). In round r, lane s sends its pair of block (s - r) mod 4,
      // for both rows in one 32-bit shuffle, and lane q receives the pair of its own block from
      // lane (q + r) mod 4.
#pragma unroll
      for (int group = 0; group < Tile::kBlockN / 32; ++group) {
        uint32_t pairs[4];  // block b of the group: the upper row's pair, the lower row's above it
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          pairs[b] = 0;
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const float* pair = &value[4 * (4 * group + b) + 2 * h];
            pairs[b] |= uint32_t(gemm::e4m3_bits(pair[0], inverse_scale[h]) |
                                 gemm::e4m3_bits(pair[1], inverse_scale[h]) << 8)
                        << (16 * h);
          }
        }
        uint64_t gathered[2] = {0, 0};  // per row: block q's 8 bytes
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int sent = (quad_lane - r + 4) % 4;
          uint32_t both_rows = pairs[0];  // pairs[sent], by selects rather than a register index
#pragma unroll
          for (int b = 1; b < 4; ++b) both_rows = sent == b ? pairs[b] : both_rows;
          const int source = (quad_lane + r) % 4;
          const uint32_t received = __shfl_sync(0xffffffffu, both_rows, (lane & ~3) | source);
          // The source's pair is columns 2 source and 2 source + 1 of the block.
#pragma unroll
          for (int h = 0; h < 2; ++h)
            gathered[h] |= uint64_t((received >> (16 * h)) & 0xffffu) << (16 * source);
        }
        const int column = col0 + 8 * (4 * group + quad_lane);
        if (column >= params.n) continue;  // N % 8 == 0: a block lies wholly inside D or past it
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (rows[h] < params.m)
            *reinterpret_cast<uint64_t*>(reinterpret_cast<uint8_t*>(params.out.d) +
                                         int64_t(rows[h]) * params.n + column) = gathered[h];
      }
    }
    if (params.out.amax_bits != nullptr) {
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2)
        thread_amax = fmaxf(thread_amax, __shfl_xor_sync(0xffffffffu, thread_amax, offset));
      // Non-negative floats order as their bits do: the max of the bits is the bits of the max.
      if (lane == 0) atomicMax(params.out.amax_bits, __float_as_uint(thread_amax));
    }
  }
#endif
};

}  // namespace gemm::hopper
