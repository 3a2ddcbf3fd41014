// Lesson 15: the epilogue through shared memory and TMA stores, with the fused epilogue.
//
// Until now each consumer thread wrote its accumulators to D itself: 64 stores of 4 bytes per
// thread, to 2 rows x 32 places scattered over 64 rows, while the tensor cores waited. Here the
// consumers write their tile into shared memory instead, with stmatrix (8 x 8 blocks of bf16 from
// the accumulator registers, in the 128-byte swizzle that TMA uses), one 64 x 64 subtile at a
// time, and one thread hands each subtile to a TMA store, which copies it to D in the background
// and clips whatever lies outside D. The consumers go on to the next subtile, and after the last
// one straight into the next tile's main loop while the stores drain: the stores of tile i
// overlap the MMAs of tile i + 1.
//
// The same epilogue computes D = act(alpha * A * B^T + beta * C + bias) in registers before the
// conversion to bf16, with the activation chosen at compile time, so the plain product pays for
// none of it. C and the bias come the way A and B do: a second thread of the producer warpgroup
// loads them with TMA ahead of the epilogue. C goes subtile by subtile into the very buffers the
// consumers then stage D in (during the main loop for the first subtiles, and into L2 for the
// rest), the bias of the tile's columns into a small ring of its own. Everything else is lesson
// 14's kernel: only the epilogue changes.
// Graded instruction signature: HGMMA UTMALDG.2D.MULTICAST UTMASTG STSM USETMAXREG
#pragma once

#include <cstdint>

#include "common/activation.hpp"
#include "common/gemm.hpp"
#include "common/hopper/cluster_pipeline.hpp"
#include "common/hopper/cluster_tile.hpp"
#include "common/hopper/consumer.hpp"
#include "common/hopper/load_k_range_multicast.hpp"
#include "common/hopper/mma_k_range.hpp"
#include "common/hopper/named_barriers.hpp"
#include "common/hopper/pipeline.hpp"
#include "common/hopper/producer_tail.hpp"
#include "common/hopper/stream_k_fixup.hpp"
#include "common/hopper/stream_k_workspace.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/hopper/work_queue.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/cluster.hpp"
#include "common/ptx/fence.hpp"
#include "common/ptx/ldmatrix.hpp"
#include "common/ptx/named_barrier.hpp"
#include "common/ptx/setmaxnreg.hpp"
#include "common/ptx/stmatrix.hpp"
#include "common/ptx/tma.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/schedule/stream_k.hpp"
#include "common/shared_memory.hpp"
#include "common/tensor_map.hpp"

namespace lesson15 {

using gemm::bf16;
using gemm::hopper::kBlockK;  // K per shared-memory slice: rows of 128 bytes
using gemm::taught::ClusterTmaPipeline;      // lesson 12's pipeline
using gemm::taught::load_k_range_multicast;  // lesson 12's producer loop
using gemm::taught::mma_k_range;             // lesson 09's consumer loop
using gemm::taught::producer_tail;           // lesson 12's exit
using gemm::taught::stream_k_fixup;          // lesson 14's fixup

// The configuration of lesson 12 (128 x 256 tiles, 2 consumers, clusters of 2) with Stages stages,
// and NEW in lesson 15: the epilogue's subtiles, 64 rows (one wgmma's) by 64 columns (128 bytes:
// the widest box the 128-byte swizzle allows), EpilogueBuffers of them per consumer, so that one
// can be filled while the TMA store of another still reads it.
template <int Stages, int EpilogueBuffers>
struct TileShape : gemm::hopper::TileShape<128, 256, Stages, /*Consumers=*/2, /*ClusterM=*/2> {
  static constexpr int kSubtileRows = TileShape::kWarpgroupM, kSubtileColumns = 64;
  static constexpr int kSubtiles = TileShape::kBlockN / kSubtileColumns;  // per 64-row block
  static constexpr int kEpilogueBuffers = EpilogueBuffers;
};
// 4 stages (192 KB) and two 8 KB subtile buffers per consumer (32 KB): 224 KB of the 227 KB a block
// may use. The README measures 1 and 2 buffers and 3 stages.
using DefaultTile = TileShape<4, 2>;
constexpr int kBlocksPerSm = 1;

// The register budget of lesson 14: kProducerRegisters for the producer, which works out the
// Stream-K items; the consumers take the rest (gemm::hopper::consumer_registers), for the tile's
// count of them. (NEW in lesson 15: the epilogue loader runs in the producer warpgroup, under the
// same budget.)
constexpr int kProducerRegisters = 56;
template <class Tile>
GEMM_HOST_DEVICE constexpr uint32_t consumer_registers() {
  return gemm::hopper::consumer_registers(Tile::kThreads, kBlocksPerSm, kProducerRegisters);
}

constexpr int kWorkQueueDepth = 2;  // lesson 13

// NEW in lesson 15: the producer warpgroup's thread that loads C and the bias (the first of its
// second warp: thread 0 loads A and B); the work items it may be behind the producer (posted to
// it, not yet received); the tiles' bias slices in flight.
constexpr int kEpilogueLoaderThread = 32;
constexpr int kEpilogueQueueDepth = 4;
constexpr int kBiasSlices = 2;

template <class Tile>
struct SharedStorage {
  gemm::hopper::OperandRing<Tile> ring;
  ClusterTmaPipeline<Tile::kStages, Tile::kClusterM> pipeline;  // of a cluster (lesson 12)
  gemm::hopper::WorkQueue<kWorkQueueDepth> queue;                     // lesson 13
  // NEW in lesson 15, the epilogue loader's (kept ahead of the 1024-byte aligned subtile buffers,
  // in the bytes their alignment leaves free after the barriers: a 128 x 256 tile keeps 4 stages):
  //   - the work items whose tiles are stored, posted to it by the producer;
  //   - when the epilogue reads C, a ring per consumer over its subtile buffers (below), one slot
  //     per buffer, which the loader fills with C before the consumer stages D in it. full: the
  //     slot's C has landed; empty: the TMA store that last read the slot is done with it;
  //   - the bias of a tile's BlockN columns, in a ring of kBiasSlices. full: it has landed;
  //     empty: every consumer has stored the tile.
  gemm::hopper::WorkQueue<kEpilogueQueueDepth> epilogue_queue;
  gemm::hopper::TmaPipeline<Tile::kEpilogueBuffers> c_slots[Tile::kConsumers];
  gemm::hopper::TmaPipeline<kBiasSlices> bias_slots;
  alignas(128) bf16 bias[kBiasSlices][Tile::kBlockN];
  // NEW in lesson 15: each consumer's subtile buffers, 64 x 64 bf16 in the 128-byte swizzle (TMA's
  // layout), 1024-byte aligned like the operand tiles.
  alignas(1024) bf16 epilogue[Tile::kConsumers][Tile::kEpilogueBuffers]
                             [Tile::kSubtileRows * Tile::kSubtileColumns];
};

// NEW in lesson 15: what the epilogue computes, chosen at compile time. The plain product,
// D = A * B^T, or the fused D = act(alpha * A * B^T + beta * C + bias), whose beta * C and bias
// are read only when the launch has them (a run-time choice, the same for every thread).
template <bool Fused, gemm::Activation Act = gemm::Activation::none>
struct EpilogueKind {
  static constexpr bool kFused = Fused;
  static constexpr gemm::Activation kActivation = Act;
};
using PlainEpilogue = EpilogueKind<false>;
template <gemm::Activation Act>
using FusedEpilogue = EpilogueKind<true, Act>;

// The fused epilogue's operands (unused by the plain one). C itself comes through its tensor map.
struct EpilogueParams {
  float alpha, beta;  // C is read when beta != 0
  const bf16* bias;   // N values, or nullptr
};

// NEW in lesson 15: whether the epilogue reads C, and the bias: the same answers in every thread.
template <class Kind>
__device__ inline bool reads_c(const EpilogueParams& params) {
  return Kind::kFused && params.beta != 0.0f;
}
template <class Kind>
__device__ inline bool reads_bias(const EpilogueParams& params) {
  return Kind::kFused && params.bias != nullptr;
}

// NEW in lesson 15: a pair of adjacent outputs (row, column) and (row, column + 1), as bf16: the
// products themselves, or alpha * product + beta * C + bias through the activation (the fast
// GELU and SiLU of common/activation.hpp). bias_bits and c_bits: the bias pair of the columns and
// C's pair at the same place, read from shared memory (zeros outside D, where TMA filled the box,
// or without them); the TMA store clips what lies outside D.
template <class Kind>
__device__ inline uint32_t epilogue_pair(float product0, float product1, uint32_t bias_bits,
                                         uint32_t c_bits, const EpilogueParams& params) {
  float2 value = make_float2(product0, product1);
  if constexpr (Kind::kFused) {
    const float2 bias = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&bias_bits));
    value.x = params.alpha * value.x + bias.x;
    value.y = params.alpha * value.y + bias.y;
    if (params.beta != 0.0f) {
      const float2 c = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&c_bits));
      value.x += params.beta * c.x;
      value.y += params.beta * c.y;
    }
    value.x = gemm::activate_fast<Kind::kActivation>(value.x);
    value.y = gemm::activate_fast<Kind::kActivation>(value.y);
  }
  const __nv_bfloat162 converted = __float22bfloat162_rn(value);
  return *reinterpret_cast<const uint32_t*>(&converted);
}

// NEW in lesson 15: the epilogue of one tile, for one consumer warpgroup: its rows first_row ..
// first_row + 63 of D, as kSubtiles subtiles of 64 x 64. For each subtile:
//   1. the subtile's buffer must be free: the storing thread waits until the TMA store that last
//      read it is done reading (its own bulk groups: only the thread that committed them can wait
//      for them), then the consumer's barrier tells the other threads. With C, the loader has
//      done that waiting for them: it loaded the subtile's C into the buffer after the storing
//      thread had released it, and the consumers wait for that C to land instead;
//   2. every thread converts its accumulators to bf16 (after the fused epilogue, with C read from
//      the buffer by ldmatrix, the bias from the tile's slice) and stmatrix writes them into the
//      buffer, in the 128-byte swizzle;
//   3. every writing thread fences the async proxy (TMA reads shared memory through it, and must
//      see what the generic proxy wrote), then the consumer's barrier: all of it is written;
//   4. the storing thread starts the TMA store of the buffer and commits it as a bulk group.
// Nobody waits for the store itself: the next subtile goes to the next buffer, and after the last
// one the consumer returns to the main loop while the stores finish. `slot` carries the buffer to
// use next (and, with C, the phase of its C) from tile to tile. bias: the shared-memory address of
// the tile's bias slice, or 0 without a bias.
template <class Tile, class Kind>
__device__ inline void store_tile(SharedStorage<Tile>& shared, const CUtensorMap& d_map,
                                  const float (&accumulator)[Tile::kBlockN / 2], int consumer,
                                  int first_row, int col0, uint32_t bias,
                                  const EpilogueParams& params,
                                  gemm::PipelineState<Tile::kEpilogueBuffers>& slot) {
  const int thread = threadIdx.x % 128, lane = thread % 32, warp = thread / 32;
  const bool storer = thread == 0;
  const uint32_t barrier = gemm::hopper::kEpilogueBarrier + consumer;
  const bool with_c = reads_c<Kind>(params);
  auto& c_slots = shared.c_slots[consumer];
  // With C: how many of the newest stores may still read their slots, and the slot of the one
  // `newer` stores after the oldest of them (the oldest is one ring position after the newest).
  constexpr int kInFlight = Tile::kEpilogueBuffers - 1;
  auto in_flight_slot = [&slot](int newer) {
    return gemm::PipelineState<Tile::kEpilogueBuffers>{
        (slot.index + Tile::kEpilogueBuffers - kInFlight + newer) % Tile::kEpilogueBuffers, 0};
  };

  // Where this lane's stmatrix rows go in a subtile buffer. One stmatrix.x4 stores 4 matrices of
  // 8 x 8 (below); lane l gives the address of row l % 8 of matrix l / 8: matrices 0 and 2 are the
  // warp's upper 8 rows, 1 and 3 its lower 8, so the lane's row of the subtile is fixed, and only
  // its 16-byte chunk changes from one stmatrix to the next.
  // BEGIN EXERCISE(swizzled_address, declares=row_offset swizzle): the byte offset of this lane's
  //   row in a subtile buffer (128-byte rows), and the XOR that the 128-byte swizzle applies to the
  //   chunk numbers of that row
  const int row = warp * 16 + ((lane / 8) % 2) * 8 + lane % 8;
  const uint32_t row_offset = row * 128;
  const int swizzle = row % 8;
  // END EXERCISE

#pragma unroll
  for (int subtile = 0; subtile < Tile::kSubtiles; ++subtile) {
    bf16* tile = shared.epilogue[consumer][slot.index];
    const uint32_t tile_address = gemm::ptx::shared_address(tile);
    if (with_c) {
      // NEW in lesson 15: the epilogue loader's TMA completes the slot's full barrier when the
      // subtile's C has landed; every thread waits for it (the load came after the slot's last
      // store was done reading it, so the buffer is free too).
      c_slots.consumer_wait(slot);
    } else {
      // BEGIN EXERCISE(buffer_reuse): make sure no TMA store still reads this buffer, and that
      //   every thread of the consumer knows it
      if (storer) gemm::ptx::bulk_wait_group_read<Tile::kEpilogueBuffers - 1>();
      gemm::ptx::named_barrier_sync(barrier, 128);
      // END EXERCISE
    }

    // The warp's 16 rows by the subtile's 64 columns: 8 blocks of 8 columns, in the wgmma layout
    // (lesson 07): accumulators 4j, 4j + 1 are row lane / 4 of block j, 4j + 2, 4j + 3 row
    // lane / 4 + 8. One stmatrix.x4 stores 4 matrices of 8 x 8: block j's upper and lower 8 rows,
    // then block j + 1's.
#pragma unroll
    for (int pair = 0; pair < Tile::kSubtileColumns / 16; ++pair) {
      const int chunk = 2 * pair + lane / 16;  // the lane's 16-byte chunk of its row
      const uint32_t chunk_offset = row_offset + ((chunk ^ swizzle) * 16);
      // NEW in lesson 15: C's pairs at the places of this thread's outputs: ldmatrix, the inverse
      // of stmatrix, from the same addresses, gives them in the layout stmatrix takes. A warp
      // reads and then overwrites only its own 16 rows, so no other warp can be in the way.
      uint32_t c_pairs[4] = {0, 0, 0, 0};
      if (with_c) gemm::ptx::ldmatrix_x4(c_pairs, tile_address + chunk_offset);
      const int first_block = subtile * (Tile::kSubtileColumns / 8) + 2 * pair;  // of the tile
      // The bias of this thread's two columns in each of the pair's two blocks of 8.
      uint32_t bias_pairs[2] = {0, 0};
#pragma unroll
      for (int b = 0; b < 2; ++b)
        if (bias != 0)
          bias_pairs[b] = gemm::ptx::load_shared_b32(
              bias + ((first_block + b) * 8 + (lane % 4) * 2) * sizeof(bf16));
      uint32_t packed[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int block = first_block + q / 2;
        const float* values = &accumulator[4 * block + 2 * (q % 2)];
        packed[q] =
            epilogue_pair<Kind>(values[0], values[1], bias_pairs[q / 2], c_pairs[q], params);
      }
      gemm::ptx::stmatrix_x4(tile_address + chunk_offset, packed[0], packed[1], packed[2],
                             packed[3]);
    }

    // BEGIN EXERCISE(store_order): make what every thread wrote visible to the TMA store, and
    //   make sure that all of it is written before the store starts
    gemm::ptx::fence_proxy_async_shared_cta();
    gemm::ptx::named_barrier_sync(barrier, 128);
    // END EXERCISE
    if (storer) {
      gemm::ptx::tma_store_2d(&d_map, tile, col0 + subtile * Tile::kSubtileColumns, first_row);
      gemm::ptx::bulk_commit_group();
    }
    // NEW in lesson 15: with C, the storing thread hands each slot back to the loader as soon as
    // its store is done reading it, keeping the newest kEpilogueBuffers - 1 stores in flight: the
    // store of subtile subtile - (kEpilogueBuffers - 1) is done reading its slot.
    if (with_c && storer && subtile >= kInFlight) {
      gemm::ptx::bulk_wait_group_read<kInFlight>();
      c_slots.consumer_release(in_flight_slot(0));
    }
    slot.advance();
  }
  // NEW in lesson 15: with C, the tile's last slots go back too, so that the loader can fill
  // every slot with the next tile's C while its main loop runs.
  if (with_c && storer) {
    gemm::ptx::bulk_wait_group_read<0>();
#pragma unroll
    for (int newer = 0; newer < kInFlight; ++newer)
      if (newer >= kInFlight - Tile::kSubtiles) c_slots.consumer_release(in_flight_slot(newer));
  }
}

// NEW in lesson 15: where the epilogue's rings stand when a block has already stored `stored`
// tiles: each tile takes the next bias slice, and kRowBlocks x kSubtiles subtile slots of each
// consumer. The consumers and the epilogue loader each count the tiles stored so far, and that
// count is all they keep of these rings from tile to tile: the consumers have no register to spare
// for more through their main loop.
template <class Tile>
GEMM_HOST_DEVICE constexpr gemm::PipelineState<Tile::kEpilogueBuffers> first_slot_of_tile(
    int stored, gemm::PipelineState<Tile::kEpilogueBuffers> start) {
  return start.advanced(stored * Tile::kRowBlocks * Tile::kSubtiles);
}

// NEW in lesson 15: the epilogue of one work item, for one consumer warpgroup, after
// `stored_before` stored tiles: its rows of the tile, each 64-row block by store_tile, with the
// tile's bias slice (the epilogue loader's: wait until it has landed, and give it back once this
// consumer is done with it).
template <class Tile, class Kind>
__device__ inline void store_item(SharedStorage<Tile>& shared, const CUtensorMap& d_map,
                                  const float (&accumulator)[Tile::kRowBlocks][Tile::kBlockN / 2],
                                  int consumer, const gemm::hopper::WorkItem& item,
                                  const EpilogueParams& params, int stored_before) {
  auto slot = first_slot_of_tile<Tile>(
      stored_before, gemm::PipelineState<Tile::kEpilogueBuffers>::consumer_start());
  const auto bias_state =
      gemm::PipelineState<kBiasSlices>::consumer_start().advanced(stored_before);
  const bool with_bias = reads_bias<Kind>(params);
  if (with_bias) shared.bias_slots.consumer_wait(bias_state);
  const uint32_t bias = with_bias ? gemm::ptx::shared_address(shared.bias[bias_state.index]) : 0;
#pragma unroll
  for (int r = 0; r < Tile::kRowBlocks; ++r)
    store_tile<Tile, Kind>(shared, d_map, accumulator[r], consumer,
                           item.row0 + consumer * Tile::kConsumerRows + r * Tile::kWarpgroupM,
                           item.col0, bias, params, slot);
  if (with_bias) {
    // store_tile's last barrier came after every thread of this consumer had read the bias: its
    // storing thread releases the slice for the consumer (the loader waits for every consumer).
    if (threadIdx.x % 128 == 0) shared.bias_slots.consumer_release(bias_state);
  }
}

// NEW in lesson 15: the epilogue loader: C and the bias, one thread. The producer posts it every
// work item of the block; for each that stores its tile (a whole tile, or the last part of a cut
// one), in the order the consumers store them:
//   - the bias of the tile's columns into the next bias slice;
//   - the whole tile's C into L2, then subtile after subtile into the consumers' slots, each as
//     soon as the slot is free. The first slots are free while the tile's main loop runs, so their
//     C is there before the epilogue starts; the later ones free up during the epilogue, and their
//     loads then read C from L2.
template <class Tile, class Kind>
__device__ inline void load_epilogue_inputs(SharedStorage<Tile>& shared, const CUtensorMap& c_map,
                                            const CUtensorMap& bias_map,
                                            const EpilogueParams& params) {
  constexpr uint32_t kSubtileBytes = Tile::kSubtileRows * Tile::kSubtileColumns * sizeof(bf16);
  constexpr uint32_t kBiasBytes = Tile::kBlockN * sizeof(bf16);
  const bool with_c = reads_c<Kind>(params), with_bias = reads_bias<Kind>(params);
  if (with_c) gemm::ptx::prefetch_tensor_map(&c_map);
  if (with_bias) gemm::ptx::prefetch_tensor_map(&bias_map);
  auto receive_state = gemm::PipelineState<kEpilogueQueueDepth>::consumer_start();
  for (int stored = 0;;) {  // the tiles stored before this item
    const gemm::hopper::WorkItem item = shared.epilogue_queue.receive_alone(receive_state);
    if (item.is_end()) break;
    if (!item.stores_tile()) continue;
    const int stored_before = stored++;
    if (with_bias) {
      // Wait until every consumer has stored the tile that last used the slice.
      const auto bias_state =
          gemm::PipelineState<kBiasSlices>::producer_start().advanced(stored_before);
      shared.bias_slots.producer_acquire(bias_state, kBiasBytes);
      gemm::ptx::tma_load_2d(shared.bias[bias_state.index], &bias_map,
                             shared.bias_slots.full_barrier(bias_state), item.col0, 0);
    }
    // Every consumer's ring of C slots is at the same place.
    auto state = first_slot_of_tile<Tile>(
        stored_before, gemm::PipelineState<Tile::kEpilogueBuffers>::producer_start());
    if (!with_c) continue;
    // (Loops kept as loops: one thread issuing a few copies per tile, under the producer
    // warpgroup's register budget, needs no unrolling.)
#pragma unroll 1
    for (int row = 0; row < Tile::kBlockM; row += Tile::kSubtileRows)
#pragma unroll 1
      for (int column = 0; column < Tile::kBlockN; column += Tile::kSubtileColumns)
        gemm::ptx::tma_prefetch_2d_l2(&c_map, item.col0 + column, item.row0 + row);
#pragma unroll 1
    for (int r = 0; r < Tile::kRowBlocks; ++r)
#pragma unroll 1
      for (int subtile = 0; subtile < Tile::kSubtiles; ++subtile) {
#pragma unroll 1
        for (int consumer = 0; consumer < Tile::kConsumers; ++consumer) {
          // Wait until the consumer's storing thread has released the slot (its last store is done
          // reading it), and announce the subtile's bytes on its full barrier.
          auto& slots = shared.c_slots[consumer];
          slots.producer_acquire(state, kSubtileBytes);
          const int row = item.row0 + consumer * Tile::kConsumerRows + r * Tile::kWarpgroupM;
          gemm::ptx::tma_load_2d(shared.epilogue[consumer][state.index], &c_map,
                                 slots.full_barrier(state),
                                 item.col0 + subtile * Tile::kSubtileColumns, row);
        }
        state.advance();
      }
  }
}

// NEW in lesson 15: the producer's post of its position-th work item (or of the end of the work),
// to the consumers and to the epilogue loader alike: the two queues move in step, and their
// states follow from the position (the producer has no registers to spare for another state).
template <class Tile, class Kind>
__device__ inline void post_item(SharedStorage<Tile>& shared, int64_t position,
                                 const gemm::hopper::WorkItem& item) {
  auto state = gemm::PipelineState<kWorkQueueDepth>::producer_start().advanced(int(position));
  shared.queue.post(state, item);
  if constexpr (Kind::kFused) {  // the plain product has no epilogue loader
    auto loader_state =
        gemm::PipelineState<kEpilogueQueueDepth>::producer_start().advanced(int(position));
    shared.epilogue_queue.post(loader_state, item);
  }
}

// NEW in lesson 15: the epilogue loader's barriers, set up by the thread that sets up the others,
// before the pipeline's (whose fence.mbarrier_init makes every earlier init of the thread visible
// to the async proxy). Its queue has one receiving warp; each consumer's storing thread releases
// the consumer's C slots, and each consumer's storing thread one arrival of the bias slices.
template <class Tile>
__device__ inline void init_epilogue_loader(SharedStorage<Tile>& shared) {
  shared.epilogue_queue.init(/*consumer_warps=*/1);
  for (auto& slots : shared.c_slots) slots.init_barriers(/*consumer_warps=*/1);
  shared.bias_slots.init_barriers(/*consumer_warps=*/Tile::kConsumers);
}

// NEW in lesson 15: the end of the epilogue: the storing thread waits until its last TMA stores
// have read their buffers: the block's shared memory must outlive them.
__device__ inline void store_tail() {
  if (threadIdx.x % 128 == 0) gemm::ptx::bulk_wait_group<0>();
}

template <class Tile, class Kind>
__global__ void __launch_bounds__(Tile::kThreads, kBlocksPerSm)
    gemm_kernel(int m, int n, const __grid_constant__ CUtensorMap a_map,
                const __grid_constant__ CUtensorMap b_map,
                const __grid_constant__ CUtensorMap d_map,
                const __grid_constant__ CUtensorMap c_map,
                const __grid_constant__ CUtensorMap bias_map, int raster_group,
                const gemm::StreamKPlan plan, gemm::hopper::StreamKWorkspace<Tile> workspace,
                EpilogueParams params) {
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);
  auto& pipeline = shared.pipeline;
  auto& queue = shared.queue;

  // Cluster c of the persistent grid is worker c of the Stream-K plan (lesson 14).
  const uint32_t rank = gemm::ptx::cluster_cta_rank();
  const gemm::hopper::StreamKWorkItems<Tile> schedule{
      plan, gemm::ptx::cluster_id_x(), gemm::ceil_div(m, Tile::kBlockM * Tile::kClusterM),
      gemm::ceil_div(n, Tile::kBlockN), raster_group, rank};
  const int warpgroup = threadIdx.x / 128;

  // Thread 0 sets up the barriers (lessons 09, 12 and 13); the cluster barrier makes them visible
  // to both blocks.
  if (threadIdx.x == 0) {
    gemm::ptx::prefetch_tensor_map(&a_map);
    gemm::ptx::prefetch_tensor_map(&b_map);
    gemm::ptx::prefetch_tensor_map(&d_map);
    queue.init(/*consumer_warps=*/Tile::kConsumers * 4);
    if constexpr (Kind::kFused) init_epilogue_loader(shared);  // NEW in lesson 15
    pipeline.init(/*consumer_warps=*/Tile::kConsumers * 4);
  }
  gemm::ptx::cluster_sync();

  if (warpgroup == 0) {
    // ---- Producer warpgroup: registers down; one thread posts every work item and loads it. ----
    gemm::ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) {
      auto write_state = gemm::PipelineState<Tile::kStages>::producer_start();
      for (int64_t i = 0; i < schedule.count(); ++i) {
        const gemm::hopper::WorkItem item = schedule.item(i);
        post_item<Tile, Kind>(shared, i, item);  // NEW in lesson 15: to the epilogue loader too
        load_k_range_multicast<Tile>(pipeline, shared.ring, a_map, b_map, item.row0, item.col0,
                                     rank, item.k_begin, item.k_end, write_state);
      }
      post_item<Tile, Kind>(shared, schedule.count(), gemm::hopper::WorkItem{});  // the end
      producer_tail(pipeline, write_state);  // lesson 12: before this block may exit
    } else if (Kind::kFused && threadIdx.x == kEpilogueLoaderThread) {
      // NEW in lesson 15: the first thread of the next warp loads C and the bias (it receives the
      // items in any case, so that the producer never waits for it when there is nothing to load).
      load_epilogue_inputs<Tile, Kind>(shared, c_map, bias_map, params);
    }
    return;
  }

  // ---- Consumer warpgroups: registers up; each its rows of every item (lesson 10). ----
  gemm::ptx::setmaxnreg_inc<consumer_registers<Tile>()>();
  const int consumer = warpgroup - 1;
  const int first_row = consumer * Tile::kConsumerRows;
  float accumulator[Tile::kRowBlocks][Tile::kBlockN / 2];
  int stored = 0;  // NEW in lesson 15: the tiles stored so far (where the epilogue's rings stand)
  auto read_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  auto receive_state = gemm::PipelineState<kWorkQueueDepth>::consumer_start();
  while (true) {
    const gemm::hopper::WorkItem item = queue.receive(receive_state);
    if (item.is_end()) break;
    const auto last_stage = mma_k_range<Tile>(pipeline, shared.ring, accumulator, first_row,
                                              item.k_begin, item.k_end, read_state);
    gemm::hopper::mma_drain(pipeline, accumulator, last_stage);
    if (!stream_k_fixup<Tile>(workspace, item, accumulator)) continue;  // lesson 14
    // NEW in lesson 15: the epilogue through shared memory and TMA stores.
    store_item<Tile, Kind>(shared, d_map, accumulator, consumer, item, params, stored++);
  }
  store_tail();  // NEW in lesson 15
}

// Which kernel launch_kind starts, and how: lesson 15's kernel, in stream order. (Lesson 17 passes
// its own kernel, started as a dependent of the kernel ahead of it: the same arguments.)
template <class Tile, class Kind>
struct StreamOrderLaunch {
  static constexpr auto kernel = gemm_kernel<Tile, Kind>;
  static constexpr bool kAfterPrerequisite = false;
};

// How many clusters of this configuration fit on the GPU at once: the persistent grid's workers.
template <class Tile>
int64_t resident_workers() {
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile, PlainEpilogue>>(shared_bytes);
  // Every kind of epilogue has the same threads and shared memory: the same clusters fit.
  return gemm::resident_clusters<gemm_kernel<Tile, PlainEpilogue>>(Tile::kClusterM, Tile::kThreads,
                                                                   shared_bytes);
}

// The Stream-K plan of a problem on this GPU (lesson 14). MinIterations: the shortest share of
// k-iterations per worker for which the plan cuts tiles (lesson 16 chooses it per configuration).
template <class Tile, bool Reverse, int MinIterations = gemm::kStreamKMinIterations>
gemm::StreamKPlan plan_for(const gemm::GemmProblem& p) {
  const int64_t clusters = resident_workers<Tile>();
  const int64_t cluster_tiles = gemm::ceil_div<int64_t>(p.m, Tile::kBlockM * Tile::kClusterM) *
                                gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  return gemm::plan_stream_k(cluster_tiles, clusters, gemm::ceil_div<int64_t>(p.k, kBlockK),
                             Reverse, MinIterations);
}

// Runs the kernel with one configuration and one kind of epilogue (the tuning driver under
// profiles/ times several): RasterGroup is the band width of the grouped order, Reverse the order
// of a cluster's Stream-K parts, MinIterations the plan's threshold (plan_for), Launch the kernel
// and its launch (StreamOrderLaunch).
template <class Tile, class Kind, int RasterGroup = 8, bool Reverse = true,
          int MinIterations = gemm::kStreamKMinIterations,
          template <class, class> class Launch = StreamOrderLaunch>
void launch_kind(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  // The tensor maps of A and B (lesson 08); B's box is what one block multicasts (lesson 12).
  const CUtensorMap a_map =
      gemm::make_tensor_map(args.a, gemm::kmajor_tile_map_args(p.m, p.k, Tile::kBlockM, kBlockK));
  const CUtensorMap b_map = gemm::make_tensor_map(
      args.b, gemm::kmajor_tile_map_args(p.n, p.k, Tile::kBSliceRows, kBlockK));
  // NEW in lesson 15: D's tensor map, for the TMA stores: boxes of one subtile, 64 rows by 64
  // columns, in the 128-byte swizzle of the subtile buffers. D is M x N with N contiguous, the
  // same shape of map as A's (M x K).
  const CUtensorMap d_map = gemm::make_tensor_map(
      args.d, gemm::kmajor_tile_map_args(p.m, p.n, Tile::kSubtileRows, Tile::kSubtileColumns));
  // NEW in lesson 15: C's map, when the epilogue reads C: the same boxes and swizzle as D's, so
  // that a box of C lands in a subtile buffer exactly where D's values for it will go. (Without
  // C the kernel never touches the map: D's stands in for it.)
  const bool reads_c = Kind::kFused && args.epilogue.beta != 0.0f;
  const CUtensorMap c_map =
      reads_c ? gemm::make_tensor_map(args.epilogue.c, gemm::kmajor_tile_map_args(
                                                           p.m, p.n, Tile::kSubtileRows,
                                                           Tile::kSubtileColumns))
              : d_map;
  // NEW in lesson 15: the bias's map, when there is one: a 1 x N matrix read one tile's BlockN
  // columns at a time, unswizzled (the columns past N arrive as zeros).
  const bool reads_bias = Kind::kFused && args.epilogue.bias != nullptr;
  const CUtensorMap bias_map =
      reads_bias ? gemm::make_tensor_map(args.epilogue.bias,
                                         gemm::kmajor_tile_map_args(1, p.n, 1, Tile::kBlockN,
                                                                    CU_TENSOR_MAP_SWIZZLE_NONE))
                 : d_map;
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  constexpr auto kernel = Launch<Tile, Kind>::kernel;
  gemm::allow_dynamic_shared_memory<kernel>(shared_bytes);
  // One cluster per worker of the Stream-K plan, all running at once (lesson 14).
  const gemm::StreamKPlan plan = plan_for<Tile, Reverse, MinIterations>(p);
  const auto workspace = gemm::hopper::StreamKWorkspace<Tile>::in(args.workspace, plan);
  const EpilogueParams params{args.epilogue.alpha, args.epilogue.beta, args.epilogue.bias};
  gemm::launch_clusters(kernel, unsigned(plan.workers * Tile::kClusterM), Tile::kClusterM,
                        Tile::kThreads, shared_bytes, gemm::Residency::all_at_once,
                        Launch<Tile, Kind>::kAfterPrerequisite, stream, int(p.m), int(p.n), a_map,
                        b_map, d_map, c_map, bias_map, RasterGroup, plan, workspace, params);
}

// NEW in lesson 15: the kernel for the launch's epilogue: the plain one for the plain product,
// otherwise the fused one with the activation compiled in.
template <class Tile, int RasterGroup = 8, bool Reverse = true,
          int MinIterations = gemm::kStreamKMinIterations,
          template <class, class> class Launch = StreamOrderLaunch>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  using gemm::Activation;
  if (args.epilogue.is_plain())
    return launch_kind<Tile, PlainEpilogue, RasterGroup, Reverse, MinIterations, Launch>(args, stream);
  switch (args.epilogue.activation) {
    case Activation::none:
      return launch_kind<Tile, FusedEpilogue<Activation::none>, RasterGroup, Reverse, MinIterations, Launch>(args, stream);
    case Activation::relu:
      return launch_kind<Tile, FusedEpilogue<Activation::relu>, RasterGroup, Reverse, MinIterations, Launch>(args, stream);
    case Activation::gelu:
      return launch_kind<Tile, FusedEpilogue<Activation::gelu>, RasterGroup, Reverse, MinIterations, Launch>(args, stream);
    case Activation::silu:
      return launch_kind<Tile, FusedEpilogue<Activation::silu>, RasterGroup, Reverse, MinIterations, Launch>(args, stream);
  }
}

// The workspace this lesson needs for a problem, and its flags, which every launch must leave zero
// (lesson 14).
template <class Tile, bool Reverse = true, int MinIterations = gemm::kStreamKMinIterations>
size_t workspace_bytes_tile(const gemm::GemmProblem& problem) {
  return gemm::hopper::StreamKWorkspace<Tile>::bytes(plan_for<Tile, Reverse, MinIterations>(problem));
}
template <class Tile, bool Reverse = true, int MinIterations = gemm::kStreamKMinIterations>
size_t workspace_flag_bytes_tile(const gemm::GemmProblem& problem) {
  return gemm::hopper::StreamKWorkspace<Tile>::flag_bytes(
      plan_for<Tile, Reverse, MinIterations>(problem));
}

inline void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch_tile<DefaultTile>(args, stream);
}

inline size_t workspace_bytes(const gemm::GemmProblem& problem) {
  return workspace_bytes_tile<DefaultTile>(problem);
}

inline size_t workspace_flag_bytes(const gemm::GemmProblem& problem) {
  return workspace_flag_bytes_tile<DefaultTile>(problem);
}

inline constexpr gemm::Lesson kLesson{
    .id = 15,
    .parent = 14,
    .slug = "tma_store_epilogue",
    .title = "stmatrix + TMA-store epilogue, overlapped with the next tile; fused alpha/beta/bias/act",
    .launch = &launch,
    .workspace_bytes = &workspace_bytes,
    .min_arch = gemm::MinArch::sm90a,
    // The workspace starts zeroed, and every launch leaves it so (lesson 14): the harness zeroes
    // it once, when it allocates it.
    .zeroed_workspace = true,
    .workspace_resets_itself = true,
    .workspace_flag_bytes = &workspace_flag_bytes,
    .fused_epilogue = true,
};

}  // namespace lesson15
