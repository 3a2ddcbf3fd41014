#pragma once
// NEW in lesson 19: the one-shot exchange, for token counts where the collectives' latency, not
// their bytes, is what costs. Stream order with NCCL's all-gather and reduce-scatter spends about
// 7-20 us in each, however few rows move; here each is one small kernel that **pushes** this
// rank's rows straight into the other ranks' memory (peer memory, mapped through CUDA IPC), then
// tells them, through a flag in each rank's memory, that they have landed:
//
//   gather:  every rank stores its shard of X into every rank's gathered X (at its rows, in token
//            order), signals "shard landed" into every rank's flags, and waits until every rank
//            has signalled it: the kernel ends with all of X in this GPU's memory;
//   GEMMs:   lesson 17's two GEMMs on all G R rows, the second writing P into this rank's partials
//            (the first launched as a dependent of the gather, which lets it be scheduled at once:
//            its blocks set up while the gather waits, and wait themselves before their first load);
//   push:    every rank stores rows q R .. (q+1) R of its partial into slot r (r: this rank) of
//            rank q's receive buffer, signals "partial landed", and waits for every rank's signal;
//   sum:     Y_r = the sum of the G slots of this rank's receive buffer (slot_sum.cuh, the same
//            kernel as the overlapped variant's last step).
//
// Why push and not pull: a load from another GPU waits for a round trip over NVLink, a store does
// not (it is posted), so a pushed row is in place one crossing after it leaves; a pulled row needs
// the signal to cross, then the load to go and come back.
//
// Small messages take a second protocol, the **low-latency** one (NCCL's LL, in this lesson's
// words): every 32 bits of data travel in one 64-bit word with the layer's epoch beside them, and
// the receiver spins on the words themselves until each holds this layer's epoch. The data's own
// crossing is the signal: no fence, no count of blocks, no flag, and the sum is done where the rows
// land. It moves twice the bytes, so it pays only while latency, not bytes, is what costs:
// up to kLowLatencyBytes per rank (OneShotExchange::low_latency: the same on every rank).
//
// A flag holds the number of the layer (the epoch) that last reached it. Epochs only grow, so a
// flag never needs resetting, and a wait for epoch e ignores what any earlier layer wrote.
//
// No end barrier: when may a rank overwrite a buffer another rank writes into? Rank q pushes into
// rank r's gathered X for layer e + 1 only after its gather of e + 1 has started, which comes
// after q's push of layer e, which waited for r's "partial landed" of layer e, which r gave after
// its GEMMs of layer e had read its gathered X. The same chain covers the receive buffers. So the
// next layer's signals are this layer's end barrier. Only work outside any layer (the check's
// poison, which TensorParallelMlp::check follows with a barrier of every rank) needs one of its
// own.

#include <algorithm>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/gemm.hpp"
#include "common/multi_gpu/stream_flags.hpp"
#include "common/ptx/grid_dependency.hpp"
#include "common/ptx/memory_order.hpp"
#include "lessons/19_tensor_parallel/plan.hpp"
#include "lessons/19_tensor_parallel/slot_sum.cuh"

namespace lesson19 {

// The signals of one layer, in the order it gives them. Each rank's flags hold, for each signal,
// one word per sending rank: rank q writes only word q of each signal, in every rank's flags, and
// a rank reads only its own flags.
// The overlapped variant and the timing (tensor_parallel_mlp.cuh) use the flags for barriers too.
enum Signal : int {
  kShardLanded = 0,    // one-shot: this rank's shard is in every rank's gathered X
  kPartialLanded = 1,  // one-shot: this rank's rows of P are in their owners' receive slots
  kLayerStarted = 2,   // overlapped: this rank's shard is in place, its receive slots are free
  kPushesLanded = 3,   // overlapped: this rank's copy engines have pushed all its rows of P
                       // (both given by the copy stream itself: signal_from_stream)
  kRanksAligned = 4,   // timing: this rank is about to start a timed run
  kSignals = 5
};
// The words of one rank's flags: the signals, then the count of a push kernel's finished blocks
// (used by this rank only).
inline constexpr int kFlagWords = kSignals * kMostRanks + 1;
inline constexpr int kBlocksDoneWord = kSignals * kMostRanks;

// Every rank's buffers that the other ranks write into, as this process addresses them (entries
// past the rank count are unused).
struct PeerBuffers {
  uint4* x_gathered[kMostRanks];      // each rank's G R x D gathered X (16-byte vectors)
  uint4* receive_slots[kMostRanks];   // each rank's G slots of R x D rows of partial sums
  uint32_t* flags[kMostRanks];        // each rank's kFlagWords flags
  uint64_t* gather_words[kMostRanks];  // low latency: each rank's G slots of R x D values of X
  uint64_t* reduce_words[kMostRanks];  // low latency: each rank's G slots of its rows of P
};

// The low-latency protocol's limit: a shard of at most this many bytes per rank (R x D bf16) goes
// as words with their epoch. Above it the words' doubled bytes cost more than the fence and the
// signal they save.
inline constexpr int64_t kLowLatencyBytes = int64_t(256) << 10;
// A 16-byte vector of data travels as kWordsPerVector words of 32 data bits and the epoch.
inline constexpr int kWordsPerVector = 4;

// Tells every rank, this one included, that this rank has reached `signal` of layer `epoch`. The
// release at system scope publishes everything that happened before it on this GPU (the stores
// to other GPUs' memory included) to a rank that reads the flag with acquire.
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
// per thread issued before their stores.
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

// The end of a push kernel: once every block's stores are done, one block signals every rank and
// waits for every rank's signal. Every block counts itself once all its threads are past their
// stores (the block barrier); thread 0's fence at system scope orders those stores, to other
// GPUs' memory too, before the count. The last block to count has thus seen every block's stores
// ordered before its own signal (release is cumulative): it resets the count for the next push,
// signals, and waits. Only that block waits, so no block waits for another block of its own grid
// to be scheduled; the kernel, and with it the exchange, ends when every rank's rows are here.
__device__ inline void last_block_signals_and_waits(const PeerBuffers& peers, int rank, int ranks,
                                                    Signal signal, uint32_t epoch) {
  __syncthreads();
  if (threadIdx.x != 0) return;
  uint32_t* blocks_done = peers.flags[rank] + kBlocksDoneWord;
  __threadfence_system();
  if (atomicAdd(blocks_done, 1u) != gridDim.x - 1) return;
  *blocks_done = 0;
  meet_every_rank(peers, rank, ranks, signal, epoch);
}

// The gather: this rank's R rows of X into rows r R .. (r+1) R of every rank's gathered X.
__global__ void one_shot_gather_kernel(PeerBuffers peers, int rank, int ranks, const uint4* shard,
                                       int64_t shard_vectors, uint32_t epoch) {
  // The first GEMM, launched as this kernel's dependent, may be scheduled on the SMs this grid
  // leaves as its blocks end, and set up while the last block waits for the other ranks.
  if (threadIdx.x == 0) gemm::ptx::launch_dependent_grids();
#pragma unroll
  for (int q = 0; q < kMostRanks; ++q)
    if (q < ranks) copy_vectors(shard, peers.x_gathered[q] + rank * shard_vectors, shard_vectors);
  last_block_signals_and_waits(peers, rank, ranks, kShardLanded, epoch);
}

// A barrier of every rank, for work that is not a kernel of this file (copies, GEMMs): one thread.
__global__ void barrier_kernel(PeerBuffers peers, int rank, int ranks, Signal signal,
                               uint32_t epoch) {
  meet_every_rank(peers, rank, ranks, signal, epoch);
}

// The push: rows q R .. (q+1) R of this rank's partial into slot r of rank q's receive buffer.
__global__ void one_shot_push_kernel(PeerBuffers peers, int rank, int ranks, const uint4* partials,
                                     int64_t slot_vectors, uint32_t epoch) {
#pragma unroll
  for (int q = 0; q < kMostRanks; ++q)
    if (q < ranks)
      copy_vectors(partials + q * slot_vectors, peers.receive_slots[q] + rank * slot_vectors,
                   slot_vectors);
  last_block_signals_and_waits(peers, rank, ranks, kPartialLanded, epoch);
}

// ---- The low-latency protocol -------------------------------------------------------------------

// Sends one vector as its kWordsPerVector words at `to`, each with the layer's epoch in its high
// half: two stores of a pair of words.
__device__ inline void send_vector(const uint4& vector, uint64_t* to, uint32_t epoch) {
  const uint64_t tag = uint64_t(epoch) << 32;
  gemm::ptx::store_relaxed_sys_pair(to, tag | vector.x, tag | vector.y);
  gemm::ptx::store_relaxed_sys_pair(to + 2, tag | vector.z, tag | vector.w);
}

// The vector whose words start at `words`, once each of its words holds the layer's epoch: a word
// that holds it holds the data sent with it (one single-copy-atomic 64-bit store). All its words
// are read at once, and read again until every one holds the epoch. A word never holds a later
// epoch while a reader waits for this one: its writer's next layer waits for this reader's rank
// (the chain at the top of this file).
__device__ inline uint4 receive_vector(const uint64_t* words, uint32_t epoch) {
  uint64_t word[kWordsPerVector];
  bool landed;
  do {
    gemm::ptx::load_relaxed_sys_pair(words, word[0], word[1]);
    gemm::ptx::load_relaxed_sys_pair(words + 2, word[2], word[3]);
    landed = true;
#pragma unroll
    for (int i = 0; i < kWordsPerVector; ++i) landed = landed && uint32_t(word[i] >> 32) == epoch;
  } while (!landed);
  return make_uint4(uint32_t(word[0]), uint32_t(word[1]), uint32_t(word[2]), uint32_t(word[3]));
}

// The low-latency kernels give each thread of the grid one (other rank, vector) unit at a time:
// unit u is vector u % vectors of the (u / vectors)-th rank other than this one, so that every
// rank's words travel at once. That other rank:
__device__ inline int other_rank(int rank, int64_t unit, int64_t vectors) {
  const int other = int(unit / vectors);
  return other < rank ? other : other + 1;
}

// The words of vector v in slot `slot` of a rank's words, whose slots hold `vectors` vectors each.
__device__ inline uint64_t* vector_words(uint64_t* words, int slot, int64_t vectors, int64_t v) {
  return words + (slot * vectors + v) * kWordsPerVector;
}

// Sends, with every thread of the grid, `vectors` vectors into slot `rank` of every other rank q's
// words (`words[q]`): those at from + q * from_per_rank (0: the same vectors to every rank).
__device__ inline void send_to_other_ranks(const uint4* from, int64_t from_per_rank,
                                           uint64_t* const* words, int rank, int ranks,
                                           int64_t vectors, uint32_t epoch) {
  for (int64_t u = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; u < (ranks - 1) * vectors;
       u += int64_t(gridDim.x) * blockDim.x) {
    const int q = other_rank(rank, u, vectors);
    const int64_t v = u % vectors;
    send_vector(from[q * from_per_rank + v], vector_words(words[q], rank, vectors, v), epoch);
  }
}

// The gather, with words: this rank's shard into slot r of every other rank's words, its own rows
// straight into its gathered X, then every other rank's slot of its words into its gathered X.
// Every thread sends before it receives, and the grid is small enough to be resident at once
// (blocks_for), so no rank's receiving blocks wait for a sending block that cannot start.
__global__ void low_latency_gather_kernel(PeerBuffers peers, int rank, int ranks,
                                          const uint4* shard, int64_t shard_vectors,
                                          uint32_t epoch) {
  if (threadIdx.x == 0) gemm::ptx::launch_dependent_grids();  // as one_shot_gather_kernel
  send_to_other_ranks(shard, 0, peers.gather_words, rank, ranks, shard_vectors, epoch);
  uint4* gathered = peers.x_gathered[rank];
  copy_vectors(shard, gathered + rank * shard_vectors, shard_vectors);
  for (int64_t u = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; u < (ranks - 1) * shard_vectors;
       u += int64_t(gridDim.x) * blockDim.x) {
    const int q = other_rank(rank, u, shard_vectors);
    const int64_t v = u % shard_vectors;
    gathered[q * shard_vectors + v] =
        receive_vector(vector_words(peers.gather_words[rank], q, shard_vectors, v), epoch);
  }
}

// The reduce, with words: rows q R .. (q+1) R of this rank's partial into slot r of rank q's
// words, then Y_r = the sum, in fp32 in rank order and rounded once (as slot_sum.cuh), of this
// rank's own rows of P and the other ranks' slots as they land.
__global__ void low_latency_reduce_kernel(PeerBuffers peers, int rank, int ranks,
                                          const uint4* partials, int64_t slot_vectors, uint4* y,
                                          uint32_t epoch) {
  send_to_other_ranks(partials, slot_vectors, peers.reduce_words, rank, ranks, slot_vectors,
                      epoch);
  for (int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < slot_vectors;
       v += int64_t(gridDim.x) * blockDim.x) {
    float sum[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int q = 0; q < ranks; ++q)
      add_bf16x8(sum, q == rank ? partials[rank * slot_vectors + v]
                                : receive_vector(
                                      vector_words(peers.reduce_words[rank], q, slot_vectors, v),
                                      epoch));
    y[v] = pack_bf16x8(sum);
  }
}

// One rank's side of the one-shot exchange: every rank's buffers and the last epoch.
// Every rank must run the same layers in the same order (as with NCCL's collectives), so that
// their epochs agree.
class OneShotExchange {
 public:
  // `peers`: every rank's gathered X, receive slots and flags (ExchangeBuffers, mapped by
  // PeerMemory); every rank's flags zeroed before any rank runs a layer. `sms`: the GPU's SM count.
  OneShotExchange(const PeerBuffers& peers, int rank, int ranks, int sms)
      : peers_(peers), rank_(rank), ranks_(ranks), sms_(sms) {}

  // A new epoch: one per layer, and one per barrier outside a layer (align_ranks). Every rank
  // asks for the same epochs in the same order.
  uint32_t next_epoch() { return ++epoch_; }

  // This rank's shard (R x D) into every rank's gathered X; returns when every rank's is here.
  void gather(const gemm::bf16* shard, int64_t shard_elements, uint32_t epoch,
              cudaStream_t stream) const {
    const int64_t vectors = shard_elements / 8;
    const auto* from = reinterpret_cast<const uint4*>(shard);
    if (low_latency(shard_elements))
      low_latency_gather_kernel<<<blocks_for(vectors * other_ranks()), kThreads, 0, stream>>>(
          peers_, rank_, ranks_, from, vectors, epoch);
    else
      one_shot_gather_kernel<<<blocks_for(vectors * ranks_), kThreads, 0, stream>>>(
          peers_, rank_, ranks_, from, vectors, epoch);
    CUDA_CHECK(cudaGetLastError());
  }

  // A barrier of every rank on `stream`: this rank's earlier work on it, its copies included,
  // comes before every rank's later work on theirs. About one crossing of NVLink, where NCCL's
  // barrier (an all-reduce) costs several.
  void barrier(Signal signal, uint32_t epoch, cudaStream_t stream) const {
    barrier_kernel<<<1, 1, 0, stream>>>(peers_, rank_, ranks_, signal, epoch);
    CUDA_CHECK(cudaGetLastError());
  }

  // NEW in lesson 19: the same two halves of a barrier given by a stream itself, with no kernel
  // (common/multi_gpu/stream_flags.hpp), for a stream of copies that runs beside a persistent GEMM
  // holding every SM. signal_from_stream: once this rank's earlier work on `stream` is done (its
  // copies into other ranks' memory included: the driver fences before each write), tells every
  // rank that this rank has reached `signal` of layer `epoch`. wait_on_stream: holds `stream`'s
  // later work until every rank has.
  void signal_from_stream(Signal signal, uint32_t epoch, cudaStream_t stream) const {
    for (int q = 0; q < ranks_; ++q)
      gemm::write_flag_after(stream, peers_.flags[q] + signal * kMostRanks + rank_, epoch);
  }
  void wait_on_stream(Signal signal, uint32_t epoch, cudaStream_t stream) const {
    for (int q = 0; q < ranks_; ++q)
      gemm::wait_for_flag(stream, peers_.flags[rank_] + signal * kMostRanks + q, epoch);
  }
  // This rank's flags of `signal`, one per rank, for a kernel that waits for them itself.
  SlotsLanded landed(Signal signal, uint32_t epoch) const {
    return {peers_.flags[rank_] + signal * kMostRanks, ranks_, epoch};
  }

  // Y_r (R x D) = the sum of rows [r R, (r+1) R) of every rank's partials (G R x D): each rank's
  // rows pushed into their owner's receive slots, then summed there.
  void reduce(const gemm::bf16* partials, int64_t slot_elements, gemm::bf16* y, uint32_t epoch,
              cudaStream_t stream) const {
    const int64_t vectors = slot_elements / 8;
    if (low_latency(slot_elements)) {
      low_latency_reduce_kernel<<<blocks_for(vectors * other_ranks()), kThreads, 0, stream>>>(
          peers_, rank_, ranks_, reinterpret_cast<const uint4*>(partials), vectors,
          reinterpret_cast<uint4*>(y), epoch);
      CUDA_CHECK(cudaGetLastError());
      return;
    }
    one_shot_push_kernel<<<blocks_for(vectors * ranks_), kThreads, 0, stream>>>(
        peers_, rank_, ranks_, reinterpret_cast<const uint4*>(partials), vectors, epoch);
    CUDA_CHECK(cudaGetLastError());
    sum_slots(reinterpret_cast<const gemm::bf16*>(peers_.receive_slots[rank_]), ranks_,
              slot_elements, y, stream);
  }

 private:
  static constexpr int kThreads = 256;
  // Whether a shard or slot of `elements` bf16 values goes by the low-latency protocol.
  static bool low_latency(int64_t elements) {
    return elements * int64_t(sizeof(gemm::bf16)) <= kLowLatencyBytes;
  }
  // The low-latency kernels' units per vector: one per other rank (one on a single GPU, whose
  // reduce still sums its vectors).
  int other_ranks() const { return std::max(ranks_ - 1, 1); }
  // Enough blocks for one unit (a vector to or from one rank) per thread, at most two per SM:
  // every block resident at once.
  int blocks_for(int64_t units) const {
    return int(std::clamp<int64_t>(gemm::ceil_div<int64_t>(units, kThreads), 1, 2 * sms_));
  }

  PeerBuffers peers_;
  int rank_, ranks_, sms_;
  uint32_t epoch_ = 0;  // flags start at 0: the first layer is epoch 1
};

}  // namespace lesson19
