#pragma once
// NEW in lesson 19: the one-shot exchange, for token counts where the collectives' latency, not
// their bytes, is what costs. Stream order with NCCL's all-gather and reduce-scatter spends about
// 10-20 us in each, however few rows move; here each is one small kernel that reads the other
// ranks' memory directly (peer memory, mapped through CUDA IPC) once every rank has said, through a
// flag in each rank's memory, that its data is in place:
//
//   gather:  every rank signals "my shard of X is ready" into every rank's flags, waits until all
//            ranks have, then copies every rank's shard into its gathered X (token order);
//   GEMMs:   lesson 16's two GEMMs on all G R rows, the second writing P into this rank's
//            partials, a buffer the other ranks map;
//   reduce:  every rank signals "my partial is ready", waits for all, then sums rows r R .. (r+1) R
//            of every rank's partial, in the order q = 0 .. G-1, in fp32, rounded to bf16 once
//            (the same arithmetic as slot_sum.cuh), into Y_r; its last block then signals "done
//            reading" and waits until every rank has, so that no rank overwrites its partials or
//            its shard (a later layer, a later check's poison) while another still reads them.
//
// A flag holds the number of the layer (the epoch) that last reached it. Epochs only grow, so a
// flag never needs resetting, and a wait for epoch e ignores what any earlier layer wrote.

#include <algorithm>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/gemm.hpp"
#include "common/ptx/memory_order.hpp"
#include "lessons/19_tensor_parallel/plan.hpp"
#include "lessons/19_tensor_parallel/slot_sum.cuh"

namespace lesson19 {

// The signals of one layer, in the order it gives them. Each rank's flags hold, for each signal,
// one word per sending rank: rank q writes only word q of each signal, in every rank's flags, and
// a rank reads only its own flags.
enum Signal : int { kShardReady = 0, kPartialReady = 1, kDoneReading = 2, kSignals = 3 };
// The words of one rank's flags: the signals, then the count of the reduce kernel's finished blocks
// (used by this rank only).
inline constexpr int kFlagWords = kSignals * kMostRanks + 1;
inline constexpr int kBlocksDoneWord = kSignals * kMostRanks;

// Every rank's buffers, as this process addresses them (entries past the rank count are unused).
struct PeerBuffers {
  const uint4* x_shards[kMostRanks];  // each rank's R x D rows of X (16-byte vectors)
  const uint4* partials[kMostRanks];  // each rank's G R x D partial sums P
  uint32_t* flags[kMostRanks];        // each rank's kFlagWords flags
};

// Tells every rank, this one included, that this rank has reached `signal` of layer `epoch`. The
// release at system scope publishes everything that happened before it on this GPU, the earlier
// kernels of the stream included, to a rank that reads the flag with acquire.
__device__ inline void signal_every_rank(const PeerBuffers& peers, int rank, int ranks,
                                         Signal signal, uint32_t epoch) {
#pragma unroll
  for (int q = 0; q < kMostRanks; ++q)
    if (q < ranks) gemm::ptx::store_release_sys(peers.flags[q] + signal * kMostRanks + rank, epoch);
}

// Waits until every rank has reached `signal` of layer `epoch` (or a later layer: the difference
// is taken as signed, so the count may wrap around).
__device__ inline void wait_for_every_rank(const uint32_t* own_flags, int ranks, Signal signal,
                                           uint32_t epoch) {
  for (int q = 0; q < ranks; ++q)
    while (int32_t(gemm::ptx::load_acquire_sys(own_flags + signal * kMostRanks + q) - epoch) < 0) {
    }
}

// A barrier across the ranks, in one thread: this rank reaches `signal` of layer `epoch`, then
// waits until every rank has.
__device__ inline void meet_every_rank(const PeerBuffers& peers, int rank, int ranks, Signal signal,
                                       uint32_t epoch) {
  signal_every_rank(peers, rank, ranks, signal, epoch);
  wait_for_every_rank(peers.flags[rank], ranks, signal, epoch);
}

// Copies `count` vectors from `from` to `to` with every thread of the grid, kLoadsInFlight loads
// per thread issued before their stores: a load from another GPU takes microseconds, so a thread
// keeps several of them in flight.
__device__ inline void copy_vectors(const uint4* __restrict__ from, uint4* __restrict__ to,
                                    int64_t count) {
  constexpr int kLoadsInFlight = 4;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; v + (kLoadsInFlight - 1) * stride < count; v += kLoadsInFlight * stride) {
    uint4 values[kLoadsInFlight];
#pragma unroll
    for (int i = 0; i < kLoadsInFlight; ++i) values[i] = from[v + i * stride];
#pragma unroll
    for (int i = 0; i < kLoadsInFlight; ++i) to[v + i * stride] = values[i];
  }
  for (; v < count; v += stride) to[v] = from[v];
}

// The gather. Thread 0 of every block signals and waits (whichever block runs first, the signal
// is the same); the block's barrier then hands what thread 0 acquired, every rank's shard, to
// the block's threads.
__global__ void one_shot_gather_kernel(PeerBuffers peers, int rank, int ranks,
                                       int64_t shard_vectors, uint4* gathered, uint32_t epoch) {
  if (threadIdx.x == 0) meet_every_rank(peers, rank, ranks, kShardReady, epoch);
  __syncthreads();
#pragma unroll
  for (int q = 0; q < kMostRanks; ++q)
    if (q < ranks) copy_vectors(peers.x_shards[q], gathered + q * shard_vectors, shard_vectors);
}

// The reduce: Y_r = bf16(P_0 + ... + P_{G-1}) on rows r R .. (r+1) R, 8 elements per thread at
// a time; then the end barrier, by the last block to finish.
__global__ void one_shot_reduce_kernel(PeerBuffers peers, int rank, int ranks,
                                       int64_t slot_vectors, uint4* y, uint32_t epoch) {
  if (threadIdx.x == 0) meet_every_rank(peers, rank, ranks, kPartialReady, epoch);
  __syncthreads();
  const int64_t first = rank * slot_vectors;  // this rank's rows of every partial
  for (int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < slot_vectors;
       v += int64_t(gridDim.x) * blockDim.x) {
    uint4 packed[kMostRanks];  // every rank's vector loaded before any is added: all in flight
#pragma unroll
    for (int q = 0; q < kMostRanks; ++q)
      if (q < ranks) packed[q] = peers.partials[q][first + v];
    float sum[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int q = 0; q < kMostRanks; ++q)
      if (q < ranks) add_bf16x8(sum, packed[q]);
    y[v] = pack_bf16x8(sum);
  }
  // The end barrier. Every block counts itself once all its threads are past their loads (the
  // block barrier); the fence orders those loads before the count. The last block to count resets
  // the count for the next layer, tells every rank that this rank has read all it needs, and waits
  // until every rank has said the same: only then does this kernel end, and with it the layer.
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t* blocks_done = peers.flags[rank] + kBlocksDoneWord;
    __threadfence();
    if (atomicAdd(blocks_done, 1u) == gridDim.x - 1) {
      *blocks_done = 0;
      __threadfence();
      meet_every_rank(peers, rank, ranks, kDoneReading, epoch);
    }
  }
}

// One rank's side of the one-shot exchange: every rank's buffers and the number of the last layer.
// Every rank must run the same layers in the same order (as with NCCL's collectives), so that
// their epochs agree.
class OneShotExchange {
 public:
  // `peers`: every rank's x_shard, partials and flags (ExchangeBuffers, mapped by PeerMemory);
  // every rank's flags zeroed before any rank runs a layer. `sms`: the GPU's SM count.
  OneShotExchange(const PeerBuffers& peers, int rank, int ranks, int sms)
      : peers_(peers), rank_(rank), ranks_(ranks), sms_(sms) {}

  // Starts a layer: its epoch.
  uint32_t next_layer() { return ++epoch_; }

  // Rows [0, R) of every rank's shard into `gathered` (G R x D), in token order.
  void gather(int64_t shard_elements, gemm::bf16* gathered, uint32_t epoch,
              cudaStream_t stream) const {
    const int64_t vectors = shard_elements / 8;
    one_shot_gather_kernel<<<blocks_for(vectors * ranks_), kThreads, 0, stream>>>(
        peers_, rank_, ranks_, vectors, reinterpret_cast<uint4*>(gathered), epoch);
    CUDA_CHECK(cudaGetLastError());
  }

  // Y_r (R x D) = the sum of rows [r R, (r+1) R) of every rank's partials.
  void reduce(int64_t slot_elements, gemm::bf16* y, uint32_t epoch, cudaStream_t stream) const {
    const int64_t vectors = slot_elements / 8;
    one_shot_reduce_kernel<<<blocks_for(vectors), kThreads, 0, stream>>>(
        peers_, rank_, ranks_, vectors, reinterpret_cast<uint4*>(y), epoch);
    CUDA_CHECK(cudaGetLastError());
  }

 private:
  static constexpr int kThreads = 256;
  // Enough blocks for one vector per thread, at most two per SM: every block then runs at once.
  int blocks_for(int64_t vectors) const {
    return int(std::clamp<int64_t>(gemm::ceil_div<int64_t>(vectors, kThreads), 1, 2 * sms_));
  }

  PeerBuffers peers_;
  int rank_, ranks_, sms_;
  uint32_t epoch_ = 0;  // flags start at 0: the first layer is epoch 1
};

}  // namespace lesson19
