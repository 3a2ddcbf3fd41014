// Lesson 15: the epilogue through shared memory and TMA stores, with the fused epilogue.
//
// Until now each consumer thread wrote its accumulators to D itself, 64 scattered 4-byte stores
// per thread, while the tensor cores waited. Here the consumers write their tile into shared
// memory instead, with stmatrix (8 x 8 blocks of bf16 from the accumulator registers, in the
// swizzle that TMA uses), one 64 x 64 subtile at a time, and one thread hands each subtile to a
// TMA store, which copies it to D in the background and clips whatever lies outside D. The
// consumers go straight into the next tile's main loop while the stores drain.
//
// The same epilogue computes D = act(alpha * A * B^T + beta * C + bias) in registers before the
// conversion to bf16, with the activation chosen at compile time, so the plain product pays for
// none of it. C and the bias come the way A and B do: a second thread of the producer warpgroup
// loads them with TMA ahead of the epilogue (common/hopper/epilogue_loader.hpp). C goes subtile by
// subtile into the very buffers the consumers then stage D in, the bias of the tile's columns into
// a small ring of its own.
//
// NEW in lesson 15: the kernel is composed of pieces, the course's final kernel
// (common/hopper/gemm_kernel.cuh): lesson 14's producer, consumers, Stream-K schedule and fixup,
// written once in common/, and the epilogue below, which the README walks through in that body.
// Graded instruction signature: HGMMA UTMALDG.2D.MULTICAST UTMASTG STSM USETMAXREG
#pragma once

#include <cstdint>

#include <cuda.h>
#include <cuda_bf16.h>

#include "common/activation.hpp"
#include "common/gemm.hpp"
#include "common/hopper/epilogue_kind.hpp"
#include "common/hopper/epilogue_loader.hpp"
#include "common/hopper/gemm_kernel.cuh"
#include "common/hopper/kernel_tile.hpp"
#include "common/hopper/mainloop_bf16.hpp"
#include "common/hopper/named_barriers.hpp"
#include "common/hopper/work_item.hpp"
#include "common/lesson.hpp"
#include "common/ptx/fence.hpp"
#include "common/ptx/ldmatrix.hpp"
#include "common/ptx/named_barrier.hpp"
#include "common/ptx/stmatrix.hpp"
#include "common/ptx/tma.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/schedule/stream_k.hpp"
#include "common/tensor_map.hpp"

namespace lesson15 {

// NEW in lesson 15: the epilogue. Tile: the block's tile (below), whose kSubtiles subtiles of
// kSubtileRows x kSubtileColumns each math warpgroup stores, through kEpilogueBuffers buffers of
// its own. Kind: the plain product, or the fused one (common/hopper/epilogue_kind.hpp).
// BEGIN TEACHING COPY(TmaStoreEpilogue)
template <class Tile, class Kind>
struct TmaStoreEpilogue {
  using Loader = gemm::hopper::EpilogueLoader<Tile>;
  using Slot = typename Loader::Slot;

  // Each math warpgroup's subtile buffers, in the swizzle of TMA's boxes (the kernel aligns them
  // to 1024 bytes, like the operand tiles), and the loader's barriers and bias slices.
  using Buffers = typename Loader::Buffers;
  struct SharedStorage {
    typename Loader::SharedStorage loader;
  };

  struct Params {
    CUtensorMap d_map, c_map, bias_map;
    float alpha, beta;  // C is read when beta != 0
    const gemm::bf16* bias;   // N values, or nullptr
    bool clamp_at_zero;       // ReLU (the linear kind: none or ReLU)
    gemm::TanhGate gate;      // GELU's or SiLU's coefficients (the gated kind)
  };

  // The tensor maps. D's boxes are one subtile, in the swizzle of the subtile buffers; D is M x N
  // with N contiguous, the same shape of map as A's (M x K). C's map, when the epilogue reads C,
  // has the same boxes, so that a box of C lands in a subtile buffer exactly where D's values for
  // it will go (without C, D's stands in for it: the kernel never touches it). The bias's map, when
  // there is one: a 1 x N matrix read one tile's BlockN columns at a time, unswizzled (the columns
  // past N arrive as zeros).
  static Params make_params(const gemm::GemmArgs& args) {
    const auto& p = args.problem;
    const auto subtile_map = gemm::kmajor_tile_map_args(
        p.m, p.n, Tile::kSubtileRows, Tile::kSubtileColumns,
        gemm::swizzle_of_row_bytes(Tile::kSubtileRowBytes));
    const bool with_c = Kind::kFused && args.epilogue.beta != 0.0f;
    const bool with_bias = Kind::kFused && args.epilogue.bias != nullptr;
    Params params;
    params.d_map = gemm::make_tensor_map(args.d, subtile_map);
    params.c_map = with_c ? gemm::make_tensor_map(args.epilogue.c, subtile_map) : params.d_map;
    params.bias_map = with_bias ? gemm::make_tensor_map(args.epilogue.bias,
                                                        gemm::kmajor_tile_map_args(
                                                            1, p.n, 1, Tile::kBlockN,
                                                            CU_TENSOR_MAP_SWIZZLE_NONE))
                                : params.d_map;
    params.alpha = args.epilogue.alpha;
    params.beta = args.epilogue.beta;
    params.bias = args.epilogue.bias;
    params.clamp_at_zero = args.epilogue.activation == gemm::Activation::relu;
    params.gate = gemm::tanh_gate_of(args.epilogue.activation);
    return params;
  }

#if defined(__CUDACC__)
  // Whether the epilogue reads C, and the bias: the same answers in every thread.
  __device__ static bool reads_c(const Params& params) {
    return Kind::kFused && params.beta != 0.0f;
  }
  __device__ static bool reads_bias(const Params& params) {
    return Kind::kFused && params.bias != nullptr;
  }

  // The kernel's set-up thread, and the producer's posts to the loader: the plain product has no
  // loader.
  __device__ static void init(SharedStorage& shared, const Params& params) {
    gemm::ptx::prefetch_tensor_map(&params.d_map);
    if constexpr (Kind::kFused) Loader::init(shared.loader);
  }
  __device__ static void post(SharedStorage& shared, int64_t position,
                              const gemm::hopper::WorkItem& item) {
    if constexpr (Kind::kFused) Loader::post(shared.loader, position, item);
  }
  // The loader thread's work (the plain product leaves that thread idle).
  __device__ static void load_inputs(SharedStorage& shared, Buffers& buffers,
                                     const Params& params) {
    if constexpr (Kind::kFused)
      Loader::load(shared.loader, buffers, params.c_map, params.bias_map, reads_c(params),
                   reads_bias(params));
  }

  // The launch's activation of x: a value of the kernel's kind of activation (Kind::kGated), the
  // same instructions for each activation of that kind (common/activation.hpp).
  __device__ static float activate(float x, const Params& params) {
    if constexpr (Kind::kGated) return gemm::gated_fast(x, params.gate);
    else return gemm::clamped(x, params.clamp_at_zero);
  }

  // One output of the fused epilogue, in fp32 before its rounding to bf16: its product, and the
  // bias of its column and C at its place (zeros where the launch has none).
  __device__ static float fused(float product, float bias, float c, const Params& params) {
    // BEGIN EXERCISE(fused_values, returns, uses=product bias c): the output, through the
    //   launch's activation (activate)
    return activate(params.alpha * product + bias + params.beta * c, params);
    // END EXERCISE
  }

  // A pair of adjacent outputs (row, column) and (row, column + 1), as bf16: the products
  // themselves, or alpha * product + beta * C + bias through the activation. bias_bits and
  // c_bits: the bias pair of the columns and C's pair at the same place, read from shared memory
  // (zeros outside D, where TMA filled the box, or without them); the TMA store clips what lies
  // outside D.
  __device__ static uint32_t pair(float product0, float product1, uint32_t bias_bits,
                                  uint32_t c_bits, const Params& params) {
    float2 value = make_float2(product0, product1);
    if constexpr (Kind::kFused) {
      const float2 bias = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&bias_bits));
      const float2 c = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&c_bits));
      value = make_float2(fused(value.x, bias.x, c.x, params), fused(value.y, bias.y, c.y, params));
    }
    const __nv_bfloat162 converted = __float22bfloat162_rn(value);
    return *reinterpret_cast<const uint32_t*>(&converted);
  }

  // The epilogue of one 64-row block of a tile, for math warpgroup `warpgroup`: rows first_row ..
  // first_row + 63 of D, as kSubtiles subtiles. For each subtile:
  //   1. the subtile's buffer must be free: the storing thread waits until the TMA store that last
  //      read it is done reading (its own bulk groups: only the thread that committed them can wait
  //      for them), then the warpgroup's barrier tells the other threads. With C, the loader has
  //      done that waiting for them: it loaded the subtile's C into the buffer after the storing
  //      thread had released it, and the warpgroup waits for that C to land instead;
  //   2. every thread converts its accumulators to bf16 (after the fused epilogue, with C read from
  //      the buffer by ldmatrix, the bias from the tile's slice) and stmatrix writes them into the
  //      buffer, in the swizzle of TMA's box;
  //   3. every writing thread fences the async proxy (TMA reads shared memory through it, and must
  //      see what the generic proxy wrote), then the warpgroup's barrier: all of it is written;
  //   4. the storing thread starts the TMA store of the buffer and commits it as a bulk group.
  // Nobody waits for the store itself: the next subtile goes to the next buffer, and after the last
  // one the warpgroup returns to the main loop while the stores finish. `slot` carries the buffer
  // to use next (and, with C, the phase of its C) from tile to tile. bias: the shared-memory address
  // of the tile's bias slice, or 0 without a bias.
  __device__ static void store_tile(SharedStorage& shared, Buffers& buffers, const Params& params,
                                    const float (&accumulator)[Tile::kBlockN / 2], int warpgroup,
                                    int first_row, int col0, uint32_t bias, Slot& slot) {
    const int thread = threadIdx.x % 128, lane = thread % 32, warp = thread / 32;
    const bool storer = thread == 0;
    const uint32_t barrier = gemm::hopper::kEpilogueBarrier + warpgroup;
    const bool with_c = reads_c(params);
    auto& c_slots = shared.loader.c_slots[warpgroup];
    // With C: how many of the newest stores may still read their slots, and the slot of the one
    // `newer` stores after the oldest of them (the oldest is one ring position after the newest).
    constexpr int kInFlight = Tile::kEpilogueBuffers - 1;
    auto in_flight_slot = [&slot](int newer) {
      return Slot{(slot.index + Tile::kEpilogueBuffers - kInFlight + newer) % Tile::kEpilogueBuffers,
                  0};
    };

    // Where this lane's stmatrix rows go in a subtile buffer. One stmatrix.x4 stores 4 matrices of
    // 8 x 8 (below); lane l gives the address of row l % 8 of matrix l / 8: matrices 0 and 2 are
    // the warp's upper 8 rows, 1 and 3 its lower 8, so the lane's row of the subtile is fixed, and
    // only its 16-byte chunk changes from one stmatrix to the next.
    // BEGIN EXERCISE(swizzled_address, declares=row_offset swizzle): the byte offset of this lane's
    //   row in a subtile buffer (rows of Tile::kSubtileRowBytes), and the XOR that TMA's swizzle of
    //   that width applies to the 16-byte chunk numbers of that row
    const int row = warp * 16 + ((lane / 8) % 2) * 8 + lane % 8;
    const uint32_t row_offset = row * Tile::kSubtileRowBytes;
    const int swizzle = (row / (128 / Tile::kSubtileRowBytes)) % (Tile::kSubtileRowBytes / 16);
    // END EXERCISE

#pragma unroll
    for (int subtile = 0; subtile < Tile::kSubtiles; ++subtile) {
      gemm::bf16* buffer = buffers[warpgroup][slot.index];
      const uint32_t buffer_address = gemm::ptx::shared_address(buffer);
      if (with_c) {
        // The loader's TMA completes the slot's full barrier when the subtile's C has landed;
        // every thread waits for it (the load came after the slot's last store was done reading
        // it, so the buffer is free too).
        c_slots.consumer_wait(slot);
      } else {
        // BEGIN EXERCISE(buffer_reuse): make sure no TMA store still reads this buffer, and that
        //   every thread of the warpgroup knows it
        if (storer) gemm::ptx::bulk_wait_group_read<Tile::kEpilogueBuffers - 1>();
        gemm::ptx::named_barrier_sync(barrier, 128);
        // END EXERCISE
      }

      // The warp's 16 rows by the subtile's columns: blocks of 8 columns, in the wgmma layout
      // (common/ptx/wgmma.hpp). One stmatrix.x4 stores 4 matrices of 8 x 8: block j's upper and
      // lower 8 rows, then block j + 1's.
#pragma unroll
      for (int pair_of_blocks = 0; pair_of_blocks < Tile::kSubtileColumns / 16; ++pair_of_blocks) {
        const int chunk = 2 * pair_of_blocks + lane / 16;  // the lane's 16-byte chunk of its row
        const uint32_t chunk_offset = row_offset + ((chunk ^ swizzle) * 16);
        // C's pairs at the places of this thread's outputs: ldmatrix, the inverse of stmatrix,
        // from the same addresses, gives them in the layout stmatrix takes. A warp reads and then
        // overwrites only its own 16 rows, so no other warp can be in the way.
        uint32_t c_pairs[4] = {0, 0, 0, 0};
        if (with_c) gemm::ptx::ldmatrix_x4(c_pairs, buffer_address + chunk_offset);
        const int first_block = subtile * (Tile::kSubtileColumns / 8) + 2 * pair_of_blocks;
        // The bias of this thread's two columns in each of the two blocks of 8.
        uint32_t bias_pairs[2] = {0, 0};
#pragma unroll
        for (int b = 0; b < 2; ++b)
          if (bias != 0)
            bias_pairs[b] = gemm::ptx::load_shared_b32(
                bias + ((first_block + b) * 8 + (lane % 4) * 2) * sizeof(gemm::bf16));
        uint32_t packed[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const int block = first_block + q / 2;
          const float* values = &accumulator[4 * block + 2 * (q % 2)];
          packed[q] = pair(values[0], values[1], bias_pairs[q / 2], c_pairs[q], params);
        }
        gemm::ptx::stmatrix_x4(buffer_address + chunk_offset, packed[0], packed[1], packed[2],
                               packed[3]);
      }

      // BEGIN EXERCISE(store_order): make what every thread wrote visible to the TMA store, and
      //   make sure that all of it is written before the store starts
      gemm::ptx::fence_proxy_async_shared_cta();
      gemm::ptx::named_barrier_sync(barrier, 128);
      // END EXERCISE
      if (storer) {
        gemm::ptx::tma_store_2d(&params.d_map, buffer, col0 + subtile * Tile::kSubtileColumns,
                                first_row);
        gemm::ptx::bulk_commit_group();
      }
      // With C, the storing thread hands each slot back to the loader as soon as its store is
      // done reading it, keeping the newest kEpilogueBuffers - 1 stores in flight: the store of
      // subtile subtile - (kEpilogueBuffers - 1) is done reading its slot.
      if (with_c && storer && subtile >= kInFlight) {
        gemm::ptx::bulk_wait_group_read<kInFlight>();
        c_slots.consumer_release(in_flight_slot(0));
      }
      slot.advance();
    }
    // With C, the tile's last slots go back too, so that the loader can fill every slot with the
    // next tile's C while its main loop runs.
    if (with_c && storer) {
      gemm::ptx::bulk_wait_group_read<0>();
#pragma unroll
      for (int newer = 0; newer < kInFlight; ++newer)
        if (newer >= kInFlight - Tile::kSubtiles) c_slots.consumer_release(in_flight_slot(newer));
    }
  }

  // The epilogue of one work item, for math warpgroup `warpgroup`, whose rows of the tile start at
  // first_row (its 64 of a cooperative tile, all of a ping-pong one): each 64-row block by
  // store_tile, with the tile's bias slice (the loader's: wait until it has landed, and give it
  // back once this warpgroup is done with it). stored_by_warpgroup and stored_by_block: the tiles
  // the warpgroup and the block stored before this one (where the loader's rings stand).
  __device__ static void store_item(SharedStorage& shared, Buffers& buffers, const Params& params,
                                    const float (&accumulator)[Tile::kRowBlocks][Tile::kBlockN / 2],
                                    int warpgroup, int first_row,
                                    const gemm::hopper::WorkItem& item, int stored_by_warpgroup,
                                    int stored_by_block) {
    Slot slot = Loader::first_c_slot(stored_by_warpgroup, Slot::consumer_start());
    const auto bias_slice =
        Loader::bias_slice(stored_by_block, Loader::BiasSlice::consumer_start());
    const bool with_bias = reads_bias(params);
    if (with_bias) shared.loader.bias_slots.consumer_wait(bias_slice);
    const uint32_t bias =
        with_bias ? gemm::ptx::shared_address(shared.loader.bias[bias_slice.index]) : 0;
#pragma unroll
    for (int r = 0; r < Tile::kRowBlocks; ++r)
      store_tile(shared, buffers, params, accumulator[r], warpgroup,
                 item.row0 + first_row + r * Tile::kWarpgroupM, item.col0, bias, slot);
    // store_tile's last barrier came after every thread of this warpgroup had read the bias: its
    // storing thread releases the slice for the warpgroup (the loader waits for each of the tile's).
    if (with_bias && threadIdx.x % 128 == 0) shared.loader.bias_slots.consumer_release(bias_slice);
  }

  // The end of the epilogue: each storing thread waits until its last TMA stores have read their
  // buffers: the block's shared memory must outlive them. Their writes to D need no wait: they are
  // done before the grid counts as finished, and the block leaves its SM sooner.
  __device__ static void tail() {
    if (threadIdx.x % 128 == 0) gemm::ptx::bulk_wait_group_read<0>();
  }
#endif
};
// END TEACHING COPY

// The configuration of lesson 14 (128 x 256 tiles, two cooperative consumers, 4 stages, clusters
// of 2), and NEW in lesson 15: subtiles of 64 rows (one wgmma's) by 64 columns (128 bytes: the
// widest box of the 128-byte swizzle), two buffers per consumer. 4 stages (192 KB) and the buffers
// (32 KB): 224 KB of the 227 KB a block may use. The README measures 1 and 2 buffers, 3 stages.
using Tile = gemm::hopper::KernelTile<128, 256, /*ClusterM=*/2, /*Stages=*/4>;

// Lesson 15's kernel: the final kernel's body with lesson 14's pieces and this epilogue, for each
// kind of epilogue (the launch runs the one its epilogue needs), on lesson 14's Stream-K plans.
template <class Kind>
using Kernel = gemm::hopper::Kernel<Tile, gemm::hopper::Bf16Mainloop, TmaStoreEpilogue<Tile, Kind>>;
using Configurations = gemm::hopper::OneConfiguration<Kernel, gemm::kStreamKMinIterations>;

// The registry's entry: what a launch runs for a problem, decided once (the Stream-K plan on as
// many clusters as the GPU holds at once, and the workspace it needs), then the launch on it; the
// workspace starts zeroed, and every launch leaves it so (lesson 14).
inline constexpr gemm::Lesson kLesson = gemm::hopper::final_kernel_lesson<Configurations>();

}  // namespace lesson15
