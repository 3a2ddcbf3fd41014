#pragma once
// Lesson 19's problem: lesson 17's MLP, tensor-parallel over G GPUs, one rank per GPU,
//
//   H_r = gelu(X W1_r^T + b1_r)    X: T x D, gathered from every rank's T/G rows; W1_r: F x D
//   P_r = H_r W2_r^T               W2_r: D x F (columns r F .. (r+1) F of W2, stored N x K)
//   Y_r = rows r R .. (r+1) R of (P_0 + ... + P_{G-1})
//
// (F = d_ff / G, R = T / G rounded up to whole chunks: plan.hpp), run four ways on every rank:
// NCCL and lesson 17's GEMMs in stream order; the same with the one-shot exchange on peer memory
// instead of NCCL (one_shot_exchange.cuh); the copy engines moving the rows while lesson 17's GEMMs
// compute, rank by rank, each rank's own rows first and last; cuBLASLt and NCCL in stream order.
// The layer runs the fastest of the first three, measured at its token count (choose).

#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/gemm.hpp"
#include "common/harness/random.hpp"
#include "common/harness/timing.hpp"
#include "common/harness/verify.hpp"
#include "common/lesson.hpp"
#include "common/multi_gpu/communicator.hpp"
#include "common/multi_gpu/cuda_handles.hpp"
#include "common/multi_gpu/nccl_check.hpp"
#include "common/multi_gpu/peer_memory.hpp"
#include "common/references/epilogue_reference.hpp"
#include "common/references/reference.hpp"
#include "lessons/19_tensor_parallel/arriving_rows_gemm.cuh"
#include "lessons/19_tensor_parallel/check_across_ranks.cuh"
#include "lessons/19_tensor_parallel/one_shot_exchange.cuh"
#include "lessons/19_tensor_parallel/plan.hpp"
#include "lessons/19_tensor_parallel/slot_sum.cuh"

namespace lesson19 {

using gemm::bf16;
using gemm::Communicator;
using gemm::DeviceBuffer;
using gemm::Event;
using gemm::PeerMemory;

// The layer's weights on one rank: the whole matrices, for the one-GPU reference, and this rank's
// slices, for the three variants. Every rank draws the same whole matrices from the seed (the
// course's cuRAND helper: the same values on every GPU) and cuts out its own slices.
struct LayerWeights {
  LayerWeights(const ShardLayout& layout, int rank, uint64_t seed, cudaStream_t stream) {
    const int64_t d = layout.d_model, ff = layout.d_ff, f = layout.ff_per_rank();
    w1.resize(size_t(ff * d));
    b1.resize(size_t(ff));
    w2.resize(size_t(d * ff));
    gemm::fill_uniform(w1.get(), w1.size(), 4 * seed + 1, stream);
    gemm::fill_uniform(b1.get(), b1.size(), 4 * seed + 2, stream);
    gemm::fill_uniform(w2.get(), w2.size(), 4 * seed + 3, stream);
    w1_shard.resize(size_t(f * d));
    b1_shard.resize(size_t(f));
    w2_shard.resize(size_t(d * f));
    // W1_r and b1_r: rows r F .. (r+1) F of W1 and b1, contiguous.
    CUDA_CHECK(cudaMemcpyAsync(w1_shard.get(), w1.get() + rank * f * d, w1_shard.bytes(),
                               cudaMemcpyDeviceToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(b1_shard.get(), b1.get() + rank * f, b1_shard.bytes(),
                               cudaMemcpyDeviceToDevice, stream));
    // W2_r: columns r F .. (r+1) F of every row of W2, a strided block.
    CUDA_CHECK(cudaMemcpy2DAsync(w2_shard.get(), size_t(f) * sizeof(bf16), w2.get() + rank * f,
                                 size_t(ff) * sizeof(bf16), size_t(f) * sizeof(bf16), size_t(d),
                                 cudaMemcpyDeviceToDevice, stream));
  }

  DeviceBuffer<bf16> w1, b1, w2;                    // whole: d_ff x D, d_ff, D x d_ff
  DeviceBuffer<bf16> w1_shard, b1_shard, w2_shard;  // this rank's: F x D, F, D x F
};

// NEW in lesson 19: the buffers through which rows move between ranks, allocated once for the
// largest token count and mapped into every other rank (PeerMemory): the overlapped variant's
// gathered X in the order it takes the rows (rows.hpp: taken_row), whose first R rows are this
// rank's shard of X, which every variant reads and the others pull (overlapped); its gathered X,
// G R x D, in token order, into which the others push their shards (one-shot); its G receive
// slots of R x D, into which the others push their rows of Y_r (slot q: from rank q); its flags
// (the one-shot exchange's signals, the overlapped variant's barriers and the timing's); and the
// low-latency protocol's words, G slots of a shard of at most kLowLatencyBytes each, one for the
// gather and one for the reduce. The flags and the words are zeroed here, before any rank maps
// them (the first layer is epoch 1).
struct ExchangeBuffers {
  ExchangeBuffers(const ShardLayout& largest, cudaStream_t stream)
      : x_taken(size_t(largest.padded_tokens() * largest.d_model)),
        x_gathered(size_t(largest.padded_tokens() * largest.d_model)),
        receive_slots(size_t(largest.gpus * largest.rows_per_rank() * largest.d_model)),
        flags(size_t(kFlagWords)),
        gather_words(size_t(largest.gpus * kLowLatencyBytes / 16 * kWordsPerVector)),
        reduce_words(gather_words.size()) {
    CUDA_CHECK(cudaMemsetAsync(flags.get(), 0, flags.bytes(), stream));
    CUDA_CHECK(cudaMemsetAsync(gather_words.get(), 0, gather_words.bytes(), stream));
    CUDA_CHECK(cudaMemsetAsync(reduce_words.get(), 0, reduce_words.bytes(), stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  // This rank's R x D rows of X: the layer's input, where every variant reads it.
  bf16* x_shard() const { return x_taken.get(); }

  DeviceBuffer<bf16> x_taken, x_gathered, receive_slots;
  DeviceBuffer<uint32_t> flags;
  DeviceBuffer<uint64_t> gather_words, reduce_words;
};

// The layer at one token count on one rank: its activations, the three ways to run it, and the
// check of Y_r against the one-GPU reference.
class TensorParallelMlp {
 public:
  // Draws X (the same on every rank), keeps this rank's rows in the exchange buffer, and computes
  // the reference of Y_r. Collective only in that every rank must construct one for the same
  // layout before any rank runs a variant.
  // `gemms`: the lesson whose kernels compute the GEMMs (lesson 17: lesson 16's, each launched as
  // a dependent of the kernel ahead of it), planned once per shape here.
  TensorParallelMlp(const ShardLayout& layout, Communicator& comm, const LayerWeights& weights,
                    const ExchangeBuffers& exchange, const PeerMemory& x_shards,
                    const PeerMemory& receive_slots, OneShotExchange& one_shot,
                    const gemm::Lesson& gemms, uint64_t seed, cudaStream_t stream,
                    cudaStream_t copy_stream)
      : layout_(layout), comm_(comm), weights_(weights), exchange_(exchange), gemms_(gemms),
        up_plan_(gemm::plan_launch(gemms, up_problem(layout.padded_tokens()))),
        down_plan_(gemm::plan_launch(gemms, down_problem(layout.padded_tokens()))),
        arriving_up_plan_(ArrivingRowsGemm::plan(up_problem(layout.padded_tokens()))),
        chunk_down_plan_(gemm::plan_launch(gemms, down_problem(layout.rows_per_chunk()))),
        x_shards_(x_shards), receive_slots_(receive_slots), one_shot_(one_shot), stream_(stream),
        copy_stream_(copy_stream), rows_landed_(size_t(layout.gpus * layout.chunks)),
        chunk_computed_(size_t((layout.gpus - 1) * layout.chunks)) {
    // The pulls' flags start at 0: below every layer's epoch.
    CUDA_CHECK(cudaMemsetAsync(rows_landed_.get(), 0, rows_landed_.bytes(), stream));
    const int64_t t = layout.tokens, d = layout.d_model, f = layout.ff_per_rank();
    const int64_t r = layout.rows_per_rank(), padded = layout.padded_tokens();
    x_alone_.resize(size_t(padded * d));
    gemm::fill_uniform(x_alone_.get(), x_alone_.size(), 4 * seed + 1, stream);
    h_.resize(size_t(padded * f));
    partials_.resize(size_t(padded * d));
    y_.resize(size_t(r * d));
    {
      // This rank's tokens, then rows of zeros up to R (plan.hpp: the padding).
      DeviceBuffer<bf16> x(size_t(t * d));
      gemm::fill_uniform(x.get(), x.size(), 4 * seed, stream);
      CUDA_CHECK(cudaMemsetAsync(exchange.x_shard(), 0, size_t(r * d) * sizeof(bf16), stream));
      CUDA_CHECK(cudaMemcpyAsync(exchange.x_shard(), x.get() + comm.rank() * r * d,
                                 size_t(layout.tokens_of(comm.rank()) * d) * sizeof(bf16),
                                 cudaMemcpyDeviceToDevice, stream));
      CUDA_CHECK(cudaStreamSynchronize(stream));  // before x is freed
    }
    // One Stream-K workspace per GEMM shape, zeroed once: lesson 17's kernels leave it zeroed.
    const auto zeroed_workspace = [stream](DeviceBuffer<unsigned char>& workspace,
                                           const gemm::LaunchPlan& plan) {
      workspace.resize(std::max(plan.workspace_bytes, size_t(1)));
      CUDA_CHECK(cudaMemsetAsync(workspace.get(), 0, workspace.bytes(), stream));
    };
    zeroed_workspace(up_workspace_, up_plan_);
    zeroed_workspace(down_workspace_, down_plan_);
    zeroed_workspace(arriving_up_workspace_, arriving_up_plan_);
    zeroed_workspace(chunk_down_workspace_, chunk_down_plan_);
    compute_reference();
  }

  const ShardLayout& layout() const { return layout_; }

  // Enqueues one run of the layer on `stream` (and, overlapped, on the copy stream, which it
  // joins again at the end); does not wait.
  void run(Variant variant, cudaStream_t stream) {
    switch (variant) {
      case Variant::stream_order: return run_stream_order(stream);
      case Variant::one_shot: return run_one_shot(stream);
      case Variant::overlapped: return run_overlapped(stream);
      case Variant::cublas_nccl: return run_cublas_nccl(stream);
    }
  }

  // The two GEMMs alone, on as many rows as stream order gives them and nothing exchanged: the
  // limit that hiding the exchange can approach. They read rows of their own (the other ranks
  // push into the gathered X) and compute nothing that is checked.
  void run_gemms_alone(cudaStream_t stream) {
    launch_gemms(x_alone_.get(), stream);
  }

  // A barrier of every rank, outside any timed run: where a run that exchanges nothing (the GEMMs
  // alone) is timed against a layer, each side starts with the ranks in step. Otherwise a rank
  // whose GEMMs run faster would time, inside its next layer, its wait for a slower rank's GEMMs
  // alone.
  void align_ranks(cudaStream_t stream) {
    one_shot_.barrier(kRanksAligned, one_shot_.next_epoch(), stream);
  }

  // Every buffer the run writes poisoned (a step that reads rows nobody wrote reads NaN), one
  // run, and this rank's tokens of Y_r against the reference. Waits. The barrier after the
  // poison: another rank's run may push rows into this rank's buffers (one-shot), and they must
  // land after the poison, not under it.
  gemm::VerifyReport check(Variant variant) {
    const int64_t slot_elements = layout_.rows_per_rank() * layout_.d_model;
    gemm::poison(x_gathered(), size_t(layout_.padded_tokens() * layout_.d_model), stream_);
    gemm::poison(exchange_.x_taken.get() + slot_elements,  // all but this rank's shard
                 size_t((layout_.gpus - 1) * slot_elements), stream_);
    gemm::poison(h_.get(), h_.size(), stream_);
    gemm::poison(partials(), partials_.size(), stream_);
    gemm::poison(exchange_.receive_slots.get(), size_t(layout_.gpus * slot_elements), stream_);
    gemm::poison(y_.get(), y_.size(), stream_);
    comm_.barrier(stream_);
    run(variant, stream_);
    CUDA_CHECK(cudaGetLastError());
    gemm::synchronize_or_timeout(stream_, 300.0);
    const int64_t checked = layout_.tokens_of(comm_.rank()) * layout_.d_model;
    if (checked == 0) return gemm::VerifyReport{};  // a rank of padding only: nothing to check
    const gemm::ExtraAllowance partials_rounded{
        magnitude_.get(), partial_allowance_per_unit(partial_roundings(variant, layout_.gpus))};
    return gemm::verify_on_device(y_.get(), reference_.get(), checked, nullptr, 0, stream_,
                                  partials_rounded);
  }

  // NEW in lesson 19: the layer's choice at this token count (plan.hpp: choose_layer). Each
  // candidate runs once to warm up, then kRounds times, each run after an L2 flush and timed by
  // events; each round starts one candidate later, so that each follows each other one equally
  // often. Every rank's median of each goes to every rank, and the slowest rank's decides. Every
  // rank runs the same runs, so their collectives match. Waits.
  Variant choose(gemm::PairedTimer& timer) {
    constexpr int kRounds = 15;
    constexpr size_t kCount = std::size(kCandidates);
    for (const Variant candidate : kCandidates) run(candidate, stream_);
    gemm::EventPairs events(kRounds * int(kCount));
    for (int round = 0; round < kRounds; ++round)
      for (size_t position = 0; position < kCount; ++position) {
        const size_t c = (position + size_t(round)) % kCount;
        const int run_index = round * int(kCount) + int(c);
        timer.flush_l2(stream_, run_index);
        CUDA_CHECK(cudaEventRecord(events.start(run_index), stream_));
        run(kCandidates[c], stream_);
        CUDA_CHECK(cudaEventRecord(events.stop(run_index), stream_));
      }
    gemm::synchronize_or_timeout(stream_, 300.0);
    std::vector<double> slowest_ms;
    for (size_t c = 0; c < kCount; ++c) {
      std::vector<double> times;
      for (int round = 0; round < kRounds; ++round)
        times.push_back(events.elapsed_ms(round * int(kCount) + int(c)));
      slowest_ms.push_back(comm_.max_over_ranks(gemm::summarize_samples(times).median_ms, stream_));
    }
    return choose_layer(slowest_ms);
  }

 private:
  gemm::GemmProblem up_problem(int64_t rows) const {  // H = gelu(X W1_r^T + b1_r)
    return {rows, layout_.ff_per_rank(), layout_.d_model};
  }
  gemm::GemmProblem down_problem(int64_t rows) const {  // P = H W2_r^T
    return {rows, layout_.d_model, layout_.ff_per_rank()};
  }
  // The first GEMM on `rows` rows of X starting at `x` (the gathered X, or a rank's own shard),
  // into H from row `first`; the second on `rows` rows of H from row `first`, into `p`.
  gemm::GemmArgs up_args(const bf16* x, int64_t first, int64_t rows, void* workspace) const {
    gemm::Epilogue bias_gelu;
    bias_gelu.bias = weights_.b1_shard.get();
    bias_gelu.activation = gemm::Activation::gelu;
    return {up_problem(rows), x, weights_.w1_shard.get(), h_.get() + first * layout_.ff_per_rank(),
            workspace, bias_gelu};
  }
  gemm::GemmArgs down_args(int64_t first, int64_t rows, bf16* p, void* workspace) const {
    return {down_problem(rows), h_.get() + first * layout_.ff_per_rank(), weights_.w2_shard.get(),
            p, workspace, gemm::Epilogue{}};
  }
  // This rank's gathered X (G R x D), in the exchange buffer the other ranks map.
  bf16* x_gathered() const { return exchange_.x_gathered.get(); }
  // This rank's partial sums P (G R x D).
  bf16* partials() const { return partials_.get(); }

  // Lesson 17's two GEMMs on all G R rows of `x` (the gathered X): H, then P into the partials.
  void launch_gemms(const bf16* x, cudaStream_t stream) {
    const int64_t rows = layout_.padded_tokens();
    gemm::launch_planned(gemms_, up_args(x, 0, rows, up_workspace_.get()), up_plan_, stream);
    gemm::launch_planned(gemms_, down_args(0, rows, partials(), down_workspace_.get()),
                         down_plan_, stream);
  }

  // NCCL gathers X in token order (rank by rank), lesson 17's two GEMMs compute H and P on all T
  // rows, NCCL sums the partials and hands each rank its R rows. One stream: each step starts
  // when the one before has finished, and no step overlaps another.
  void run_stream_order(cudaStream_t stream) {
    const size_t shard_elements = size_t(layout_.rows_per_rank() * layout_.d_model);
    NCCL_CHECK(ncclAllGather(exchange_.x_shard(), x_gathered(), shard_elements, ncclBfloat16,
                             comm_.get(), stream));
    launch_gemms(x_gathered(), stream);
    NCCL_CHECK(ncclReduceScatter(partials(), y_.get(), shard_elements, ncclBfloat16, ncclSum,
                                 comm_.get(), stream));
  }

  // NEW in lesson 19: stream order with the one-shot exchange (one_shot_exchange.cuh) in place of
  // NCCL's collectives: a kernel that pushes this rank's shard into every rank's gathered X, the
  // same two GEMMs, a kernel that pushes every rank's rows of P into their owner's receive slots,
  // and the sum of this rank's slots. The push kernels end when every rank's rows have landed.
  void run_one_shot(cudaStream_t stream) {
    const int64_t slot_elements = layout_.rows_per_rank() * layout_.d_model;
    const uint32_t epoch = one_shot_.next_epoch();
    one_shot_.gather(exchange_.x_shard(), slot_elements, epoch, stream);
    launch_gemms(x_gathered(), stream);
    one_shot_.reduce(partials(), slot_elements, y_.get(), epoch, stream);
  }

  // The same with cuBLASLt's GEMMs (its GELU_BIAS epilogue, then the plain product).
  void run_cublas_nccl(cudaStream_t stream) {
    const size_t shard_elements = size_t(layout_.rows_per_rank() * layout_.d_model);
    NCCL_CHECK(ncclAllGather(exchange_.x_shard(), x_gathered(), shard_elements,
                             ncclBfloat16, comm_.get(), stream));
    const gemm::GemmArgs up = up_args(x_gathered(), 0, layout_.padded_tokens(), nullptr);
    const gemm::GemmArgs down = down_args(0, layout_.padded_tokens(), partials(), nullptr);
    cublaslt_.run(up.problem, up.a, up.b, up.epilogue, up.d, CUDA_R_16BF, stream);
    cublaslt_.run(down.problem, down.a, down.b, down.epilogue, down.d, CUDA_R_16BF, stream);
    NCCL_CHECK(ncclReduceScatter(partials(), y_.get(), shard_elements, ncclBfloat16, ncclSum,
                                 comm_.get(), stream));
  }

  // NEW in lesson 19: the layer with the rows moved by the copy engines while the SMs run the
  // GEMMs. Lesson 17's kernels are persistent and cooperative: each holds every SM with nearly all
  // of its shared memory, so an NCCL kernel beside one would wait for it to end. The copy engines
  // need no SM, and the copy stream gives its signals and waits itself (stream_flags.hpp), so
  // nothing on it waits for an SM either. The rows are in the order this rank takes them
  // (rows.hpp: taken_row): its own first. The first GEMM is one launch over every row, whose
  // producers wait for each block of rows to land before loading it (arriving_rows_gemm.cuh); the
  // second runs rank block by rank block, the other ranks' rows first, each pushed to its owner
  // while the next is computed, its own rows last, written straight into its own receive slot. On
  // rank 0 of 3, one chunk each:
  //
  //   copy stream: [barrier][pull 1's rows][pull 2's rows]      [push 1's rows][push 2's rows]
  //   SMs:         [GEMM 1: own rows, 1's and 2's as they land][GEMM 2: 1][GEMM 2: 2][GEMM 2: own]
  //                                                                                        [sum]
  void run_overlapped(cudaStream_t stream) {
    const int64_t d = layout_.d_model, rows = layout_.rows_per_chunk();
    const int64_t slot_elements = layout_.rows_per_rank() * d;
    const int rank = comm_.rank(), gpus = layout_.gpus, chunks = layout_.chunks;
    bf16* own_slot = exchange_.receive_slots.get() + rank * slot_elements;
    const uint32_t epoch = one_shot_.next_epoch();

    // Barrier, on the copy stream alone: every rank has its shard in place and has finished
    // reading its receive slots (the sum of its previous layer comes before layer_started_ in its
    // stream). After it, this rank may pull the others' shards and push into their slots. The
    // first GEMM does not wait for it: it starts on rows of this rank's own.
    CUDA_CHECK(cudaEventRecord(layer_started_.get(), stream));
    CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, layer_started_.get()));
    one_shot_.signal_from_stream(kLayerStarted, epoch, copy_stream_);
    one_shot_.wait_on_stream(kLayerStarted, epoch, copy_stream_);

    // The gather: the other ranks' rows, in the order the first GEMM takes them, chunk by chunk,
    // each followed by its block's flag.
    for (int step = 1; step < gpus; ++step) {
      const int source = first_gemm_rank(rank, step, gpus);
      for (int chunk = 0; chunk < chunks; ++chunk) {
        const RowBlock block = pulled_block(layout_, chunk, source);
        const int64_t taken = taken_row(layout_, rank, block.destination_row);
        CUDA_CHECK(cudaMemcpyAsync(exchange_.x_taken.get() + taken * d,
                                   x_shards_.of<bf16>(source) + block.source_row * d,
                                   size_t(block.rows * d) * sizeof(bf16), cudaMemcpyDefault,
                                   copy_stream_));
        gemm::write_flag_after(copy_stream_, rows_landed_.get() + taken / rows, epoch);
      }
    }

    // The first GEMM: one launch over every row, each block of rows loaded once it has landed.
    const RowsArrival arrival{rows_landed_.get(), epoch, int(rows), chunks, gpus * chunks};
    ArrivingRowsGemm::launch(
        up_args(exchange_.x_taken.get(), 0, layout_.padded_tokens(), arriving_up_workspace_.get()),
        arrival, arriving_up_plan_, stream);

    // The second GEMM: the other ranks' rows first, each pushed into this rank's slot of its
    // owner's receive buffer while the next is computed (the push waits for the GEMM's event);
    // its own rows last, written straight into its own slot.
    for (int step = 0; step < gpus; ++step) {
      const int owner = second_gemm_rank(rank, step, gpus);
      for (int chunk = 0; chunk < chunks; ++chunk) {
        const RowBlock block = pushed_block(layout_, chunk, owner);
        const int64_t taken = taken_row(layout_, rank, block.source_row);
        if (owner == rank) {
          gemm::launch_planned(gemms_,
                               down_args(taken, rows, own_slot + block.destination_row * d,
                                         chunk_down_workspace_.get()),
                               chunk_down_plan_, stream);
          continue;
        }
        bf16* partial = partials() + taken * d;
        gemm::launch_planned(gemms_, down_args(taken, rows, partial, chunk_down_workspace_.get()),
                             chunk_down_plan_, stream);
        const Event& computed = chunk_computed_[copy_index(step + 1, chunk)];
        CUDA_CHECK(cudaEventRecord(computed.get(), stream));
        CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, computed.get()));
        bf16* slot = receive_slots_.of<bf16>(owner) + rank * slot_elements;
        CUDA_CHECK(cudaMemcpyAsync(slot + block.destination_row * d, partial,
                                   size_t(block.rows * d) * sizeof(bf16), cudaMemcpyDefault,
                                   copy_stream_));
      }
    }
    // Barrier: the copy stream tells every rank that its pushes have landed, and the compute
    // stream joins it (the layer ends when both streams have); the sum of this rank's slots into
    // Y_r waits, in its blocks, until every rank's pushes have landed in them.
    one_shot_.signal_from_stream(kPushesLanded, epoch, copy_stream_);
    CUDA_CHECK(cudaEventRecord(pushes_done_.get(), copy_stream_));
    CUDA_CHECK(cudaStreamWaitEvent(stream, pushes_done_.get()));
    sum_slots(exchange_.receive_slots.get(), layout_.gpus, slot_elements, y_.get(), stream,
              one_shot_.landed(kPushesLanded, epoch));
  }

  // The event of a push: chunk `chunk` of the rank `step` (1 .. G-1) places away in the order of
  // the second GEMM.
  size_t copy_index(int step, int chunk) const {
    return size_t((step - 1) * layout_.chunks + chunk);
  }

  // The reference of Y_r and the magnitude of its partials (check_across_ranks.cuh), one slice
  // of d_ff at a time, from the whole weights and this rank's rows of X. Waits.
  void compute_reference() {
    const int64_t d = layout_.d_model, ff = layout_.d_ff, f = layout_.ff_per_rank();
    const int64_t r = layout_.rows_per_rank();
    reference_.resize(size_t(r * d));
    magnitude_.resize(size_t(r * d));
    CUDA_CHECK(cudaMemsetAsync(reference_.get(), 0, reference_.bytes(), stream_));
    CUDA_CHECK(cudaMemsetAsync(magnitude_.get(), 0, magnitude_.bytes(), stream_));
    DeviceBuffer<bf16> h_slice(size_t(r * f)), w2_slice(size_t(d * f));
    DeviceBuffer<float> partial(size_t(r * d));
    for (int slice = 0; slice < layout_.gpus; ++slice) {
      gemm::Epilogue bias_gelu;
      bias_gelu.bias = weights_.b1.get() + slice * f;
      bias_gelu.activation = gemm::Activation::gelu;
      cublaslt_.run({r, f, d}, exchange_.x_shard(), weights_.w1.get() + slice * f * d,
                    bias_gelu, h_slice.get(), CUDA_R_16BF, stream_);
      CUDA_CHECK(cudaMemcpy2DAsync(w2_slice.get(), size_t(f) * sizeof(bf16),
                                   weights_.w2.get() + slice * f, size_t(ff) * sizeof(bf16),
                                   size_t(f) * sizeof(bf16), size_t(d),
                                   cudaMemcpyDeviceToDevice, stream_));
      cublas_.run_fp32_output({r, d, f}, h_slice.get(), w2_slice.get(), partial.get(), stream_);
      accumulate_partial(partial.get(), r * d, reference_.get(), magnitude_.get(), stream_);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream_));  // before the slices are freed
  }

  ShardLayout layout_;
  Communicator& comm_;
  const LayerWeights& weights_;
  const ExchangeBuffers& exchange_;
  const gemm::Lesson& gemms_;
  gemm::LaunchPlan up_plan_, down_plan_;       // all G R rows
  gemm::LaunchPlan arriving_up_plan_;          // all G R rows, as they arrive (overlapped)
  gemm::LaunchPlan chunk_down_plan_;           // a chunk's rows (overlapped)
  const PeerMemory& x_shards_;       // every rank's exchange_.x_shard
  const PeerMemory& receive_slots_;  // every rank's exchange_.receive_slots
  OneShotExchange& one_shot_;
  cudaStream_t stream_, copy_stream_;
  DeviceBuffer<bf16> x_alone_, h_, partials_, y_;  // the GEMMs alone's rows; H; P; Y_r
  DeviceBuffer<unsigned char> up_workspace_, down_workspace_;
  DeviceBuffer<unsigned char> arriving_up_workspace_, chunk_down_workspace_;
  DeviceBuffer<float> reference_, magnitude_;
  gemm::EpilogueReference cublaslt_;
  gemm::CublasGemm cublas_;
  Event layer_started_, pushes_done_;
  // Overlapped: block b of the taken order (a chunk of a rank's rows) has landed in this rank's
  // x_taken once rows_landed_[b] holds the layer's epoch (the own rank's blocks: never written).
  DeviceBuffer<uint32_t> rows_landed_;
  std::vector<Event> chunk_computed_;  // one per chunk of every other rank
};

}  // namespace lesson19
