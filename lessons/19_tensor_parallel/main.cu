// Lesson 19 (a supplement): lesson 17's GEMMs tensor-parallel over G GPUs, the MLP of Llama 3.1
// 8B, with the communication hidden by the copy engines where the token count makes that pay, and
// cut to one kernel each way on peer memory where it does not. One process per GPU: the parent
// forks the ranks and watches them (common/multi_gpu/ranks.hpp); each rank joins an NCCL
// communicator (common/multi_gpu/communicator.hpp), maps the other ranks' exchange buffers
// (common/multi_gpu/peer_memory.hpp), checks the layer four ways at each token count, chooses the
// fastest and times it (tensor_parallel_mlp.cuh). Rank 0 prints.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "common/cuda_check.hpp"
#include "common/harness/activity_timeline.hpp"
#include "common/harness/cli.hpp"
#include "common/harness/runner.hpp"
#include "common/harness/timing.hpp"
#include "common/mlp/mlp_chain.hpp"
#include "common/multi_gpu/communicator.hpp"
#include "common/multi_gpu/cuda_handles.hpp"
#include "common/multi_gpu/peer_memory.hpp"
#include "common/multi_gpu/ranks.hpp"
#include "lessons/19_tensor_parallel/plan.hpp"
#include "lessons/19_tensor_parallel/rehearsal_on_gpu.hpp"
#include "lessons/19_tensor_parallel/tensor_parallel_mlp.cuh"
#include "lessons/registry.hpp"

namespace lesson19 {

using gemm::RankChannels;
using gemm::Stream;

// ---- The parent: what it learns of the GPUs without touching CUDA ---------------------------

// What a child of the parent found out about the GPUs (it crosses a pipe: plain bytes).
struct GpuSurvey {
  int exit_code = gemm::kExitPass;  // kExitNoGpu or kExitUnsupportedGpu: `message` says why
  int device_count = 0;
  char message[512] = {};
};

// Counts the GPUs, and checks that the first `gpus` of them (0: all) can run lesson 17's kernels
// and reach each other's memory, which the overlapped variant's copies need.
inline GpuSurvey survey_gpus(int gpus) {
  GpuSurvey survey;
  const auto fail = [&survey](int code, const std::string& message) {
    survey.exit_code = code;
    std::snprintf(survey.message, sizeof(survey.message), "%s", message.c_str());
    return survey;
  };
  if (const auto missing = gemm::missing_gpu()) return fail(gemm::kExitNoGpu, *missing);
  CUDA_CHECK(cudaGetDeviceCount(&survey.device_count));
  const int used = gpus == 0 ? survey.device_count : std::min(gpus, survey.device_count);
  for (int device = 0; device < used; ++device)
    if (const auto reason = gemm::unsupported_reason(gemm::lessons::lesson17(), gemm::query_device(device)))
      return fail(gemm::kExitUnsupportedGpu, "GPU " + std::to_string(device) +
                                                 " cannot run lesson 17's kernels: " + *reason);
  for (int device = 0; device < used; ++device)
    for (int peer = 0; peer < used; ++peer) {
      int reachable = 1;
      if (peer != device) CUDA_CHECK(cudaDeviceCanAccessPeer(&reachable, device, peer));
      if (!reachable)
        return fail(gemm::kExitUnsupportedGpu,
                    "GPU " + std::to_string(device) + " cannot reach GPU " + std::to_string(peer) +
                        "'s memory directly (no peer-to-peer path), which the copy engines of "
                        "the overlapped variant need");
    }
  return survey;
}

// ---- A rank ------------------------------------------------------------------------------------

ShardLayout layout_for(const gemm::MlpShape& model, int64_t tokens, int gpus, int chunks) {
  return {tokens, model.d_model, model.d_ff, gpus, chunks};
}

// What each rank sends rank 0 about its checks at one token count, per variant: the max normalized
// error and the number of mismatched elements (0: passed).
constexpr int kCheckFigures = 2;

// What each rank sends rank 0 about its timings at one token count: the layer's choice, each
// way's median time, and the ratios of the pairings (time over time, below 1: the first is
// faster; each from its own pairing, the layer's against stream order from its candidate's).
struct TimingFigures {
  double layer;  // the chosen variant, as its index in kVariants
  double stream_us, one_shot_us, overlapped_us, cublas_us, gemms_us;
  double one_shot_over_stream, overlapped_over_stream, layer_over_stream, layer_over_cublas,
      layer_over_gemms;
  double pairs, sm_mhz;  // sm_mhz: the median SM clock of the first pairing, -1 if unknown

  std::vector<double> numbers() const {
    return {layer,
            stream_us,
            one_shot_us,
            overlapped_us,
            cublas_us,
            gemms_us,
            one_shot_over_stream,
            overlapped_over_stream,
            layer_over_stream,
            layer_over_cublas,
            layer_over_gemms,
            pairs,
            sm_mhz};
  }
  static TimingFigures from(const double* n) {
    return {n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7], n[8], n[9], n[10], n[11], n[12]};
  }
  static constexpr int kCount = 13;

  Variant layer_variant() const { return kVariants[size_t(layer)]; }
};

size_t variant_index(Variant variant) {
  return size_t(std::find(std::begin(kVariants), std::end(kVariants), variant) -
                std::begin(kVariants));
}

// The layer's choice (TensorParallelMlp::choose), then four pairings (the paired protocol,
// common/harness/timing.hpp): one-shot against stream order, overlapped against stream order, the layer
// against cuBLASLt + NCCL, the layer against its GEMMs alone. Every rank runs the same number of
// pairs (agreed_timing_options), or their collectives would not match.
TimingFigures time_variants(TensorParallelMlp& mlp, Communicator& comm, gemm::PairedTimer& timer,
                            int pairs, cudaStream_t stream) {
  mlp.run(Variant::stream_order, stream);  // once untimed: first-launch work out of the way
  gemm::EventPairs probe(1);
  CUDA_CHECK(cudaEventRecord(probe.start(0), stream));
  mlp.run(Variant::stream_order, stream);
  CUDA_CHECK(cudaEventRecord(probe.stop(0), stream));
  gemm::synchronize_or_timeout(stream, 300.0);
  const double slowest_ms = comm.max_over_ranks(probe.elapsed_ms(0), stream);
  const gemm::TimingOptions options = agreed_timing_options(pairs, slowest_ms);
  const Variant layer = mlp.choose(timer);

  const auto run = [&mlp](Variant variant) {
    return [&mlp, variant](cudaStream_t s) { mlp.run(variant, s); };
  };
  const auto gemms_alone = [&mlp](cudaStream_t s) { mlp.run_gemms_alone(s); };
  const gemm::PairedTiming one_shot_vs_stream =
      timer.time(run(Variant::one_shot), run(Variant::stream_order), options, stream);
  const gemm::PairedTiming overlapped_vs_stream =
      timer.time(run(Variant::overlapped), run(Variant::stream_order), options, stream);
  const gemm::PairedTiming layer_vs_cublas =
      timer.time(run(layer), run(Variant::cublas_nccl), options, stream);
  const auto align_ranks = [&mlp](cudaStream_t s) { mlp.align_ranks(s); };
  const gemm::PairedTiming layer_vs_gemms =
      timer.time(run(layer), gemms_alone, options, stream, align_ranks, align_ranks);
  const double layer_over_stream = layer == Variant::one_shot     ? 1.0 / one_shot_vs_stream.ratio
                                   : layer == Variant::overlapped ? 1.0 / overlapped_vs_stream.ratio
                                                                  : 1.0;  // it is stream order
  const gemm::ClockReport& clock = one_shot_vs_stream.clock;
  return {double(variant_index(layer)),
          1e3 * one_shot_vs_stream.reference.median_ms,
          1e3 * one_shot_vs_stream.lesson.median_ms,
          1e3 * overlapped_vs_stream.lesson.median_ms,
          1e3 * layer_vs_cublas.reference.median_ms,
          1e3 * layer_vs_gemms.reference.median_ms,
          1.0 / one_shot_vs_stream.ratio,
          1.0 / overlapped_vs_stream.ratio,
          layer_over_stream,
          1.0 / layer_vs_cublas.ratio,
          1.0 / layer_vs_gemms.ratio,
          double(one_shot_vs_stream.pairs),
          clock.available ? clock.sm_mhz_median : -1.0};
}

// The GPU of every rank as one phrase: "2 x NVIDIA H100 80GB HBM3", or each rank's if they differ.
std::string describe_gpus(Communicator& comm, const std::string& name, cudaStream_t stream) {
  char mine[256] = {};
  std::snprintf(mine, sizeof(mine), "%s", name.c_str());
  const std::vector<unsigned char> all = comm.all_gather_bytes(mine, sizeof(mine), stream);
  std::vector<std::string> names;
  for (int r = 0; r < comm.ranks(); ++r)
    names.emplace_back(reinterpret_cast<const char*>(all.data()) + r * sizeof(mine));
  bool same = true;
  for (const std::string& each : names) same = same && each == names[0];
  if (same) return std::to_string(comm.ranks()) + " x " + names[0];
  std::string list;
  for (int r = 0; r < comm.ranks(); ++r)
    list += (r ? ", " : "") + std::string("rank ") + std::to_string(r) + ": " + names[size_t(r)];
  return list;
}

std::string nccl_version() {
  int code = 0;
  NCCL_CHECK(ncclGetVersion(&code));
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

// Rank 0's timing table (rank 0's figures; each rank times the same collective-bound layer) and,
// with --csv, every rank's figures, one row per rank and token count. False if the file cannot be
// written.
bool print_timings(const std::vector<int64_t>& token_counts,
                   const std::vector<std::vector<double>>& timings,
                   const std::vector<std::vector<double>>& checks, const Options& options,
                   int gpus, const std::string& gpu_names) {
  std::printf("\ntimes: medians of the pairs on rank 0, in us; ratios: medians of the per-pair "
              "ratios, time over time (below 1: the first is faster); the layer runs the fastest "
              "of stream order, one-shot and overlapped, measured\n");
  std::printf("%7s %10s %9s %9s %10s %9s %9s %9s %9s %11s %12s %11s  %s\n", "tokens", "layer",
              "stream", "one-shot", "overlapped", "cuBLASLt", "GEMMs", "1shot/str", "ovl/str",
              "layer/str", "layer/cuBLAS", "layer/GEMMs", "SM clock (every rank's median)");
  for (size_t i = 0; i < token_counts.size(); ++i) {
    const TimingFigures first = TimingFigures::from(timings[i].data());
    std::string clocks;
    for (int r = 0; r < gpus; ++r) {
      const double mhz = TimingFigures::from(timings[i].data() + r * TimingFigures::kCount).sm_mhz;
      clocks += (r ? " " : "") + (mhz < 0 ? std::string("n/a") : std::to_string(int(mhz)));
    }
    std::printf("%7lld %10s %9.1f %9.1f %10.1f %9.1f %9.1f %9.3f %9.3f %11.3f %12.3f %11.3f  %s MHz\n",
                (long long)token_counts[i], variant_label(first.layer_variant()), first.stream_us,
                first.one_shot_us, first.overlapped_us, first.cublas_us, first.gemms_us,
                first.one_shot_over_stream, first.overlapped_over_stream, first.layer_over_stream,
                first.layer_over_cublas, first.layer_over_gemms, clocks.c_str());
  }
  std::fflush(stdout);
  if (options.csv_path.empty()) return true;
  std::ofstream file(options.csv_path);
  file << "tokens,gpus,chunks,rank,layer,stream_us,one_shot_us,overlapped_us,cublaslt_nccl_us,"
          "gemms_alone_us,one_shot_over_stream,overlapped_over_stream,layer_over_stream,"
          "layer_over_cublaslt,layer_over_gemms_alone,pairs,sm_mhz_median,stream_error,"
          "one_shot_error,overlapped_error,cublaslt_nccl_error,date,gpu,commit\n";
  for (size_t i = 0; i < token_counts.size(); ++i)
    for (int r = 0; r < gpus; ++r) {
      const TimingFigures f = TimingFigures::from(timings[i].data() + r * TimingFigures::kCount);
      file << token_counts[i] << "," << gpus << "," << options.chunks << "," << r << ","
           << variant_label(f.layer_variant()) << "," << f.stream_us << "," << f.one_shot_us
           << "," << f.overlapped_us << "," << f.cublas_us << "," << f.gemms_us << ","
           << f.one_shot_over_stream << "," << f.overlapped_over_stream << ","
           << f.layer_over_stream << "," << f.layer_over_cublas << "," << f.layer_over_gemms
           << "," << f.pairs << ","
           << (f.sm_mhz < 0 ? std::string("n/a") : std::to_string(int(f.sm_mhz)));
      // This rank's check of each variant (kVariants' order, as the header's): its max
      // normalized error (pass <= 1).
      for (size_t v = 0; v < std::size(kVariants); ++v)
        file << "," << checks[i][(size_t(r) * std::size(kVariants) + v) * kCheckFigures];
      file << "," << gemm::today_utc() << ",\"" << gpu_names << "\"," << options.commit << "\n";
    }
  return bool(file);
}

// A check's cell: the max normalized error over the ranks, or FAILED and the mismatched elements
// of all ranks together.
std::string check_cell(double max_normalized_error, double mismatches) {
  char cell[32];
  if (mismatches > 0) std::snprintf(cell, sizeof(cell), "FAILED: %.0f", mismatches);
  else std::snprintf(cell, sizeof(cell), "%.3f", max_normalized_error);
  return cell;
}

// One span of a rank's timeline as it crosses to rank 0: plain bytes of a fixed size.
struct SpanRecord {
  double start_us = 0, end_us = 0;  // from the end of the rank's L2 flush
  bool present = false, on_copy_engine = false;
  char what[48] = {};
};

// The name a layer's kernel goes by in the timeline: lesson 17's GEMMs run lesson 15's kernel;
// any other kernel (cuBLASLt's) by its own name.
std::string kernel_label(const std::string& name) {
  if (name.find("gemm_kernel") != std::string::npos) return "GEMM";
  if (name.find("nccl") != std::string::npos) return "NCCL";
  if (name.find("sum_slots") != std::string::npos) return "sum of the slots";
  if (name.find("one_shot_gather") != std::string::npos) return "one-shot gather";
  if (name.find("one_shot_push") != std::string::npos) return "one-shot push";
  if (name.find("low_latency_gather") != std::string::npos) return "low-latency gather";
  if (name.find("low_latency_reduce") != std::string::npos) return "low-latency reduce";
  if (name.find("barrier_kernel") != std::string::npos) return "flag barrier";
  return name;
}

// NEW in lesson 19: every rank's timeline of one layer of `variant`, printed by rank 0. Each rank
// records layers with CUPTI (gemm::ActivityTimeline), names its GEMMs and copies by the order it
// issued them (overlapped_steps for the overlapped variant), and sends its spans to rank 0. The
// first recorded layer is thrown away: the first launch of each kernel under CUPTI costs the host
// time. The layer shown is the second of two enqueued back to back, each after an L2 flush (a
// memset), as in the timed runs, so that the GPU never idles while the host enqueues it and the
// layer starts from HBM. Times are in microseconds from the end of the rank's L2 flush; each GPU
// has its own clock.
void print_timeline(TensorParallelMlp& mlp, Variant variant, Communicator& comm,
                    gemm::PairedTimer& timer, cudaStream_t stream) {
  constexpr int kMostSpans = 96;
  const ShardLayout& layout = mlp.layout();
  std::vector<gemm::ActivitySpan> spans;
  {
    gemm::ActivityTimeline timeline;
    mlp.run(variant, stream);
    gemm::synchronize_or_timeout(stream, 300.0);
    timeline.clear();
    for (int layer = 0; layer < 2; ++layer) {
      timer.flush_l2(stream, layer);
      mlp.run(variant, stream);
    }
    gemm::synchronize_or_timeout(stream, 300.0);
    spans = timeline.spans();
  }
  // The second layer: what comes after the last flush. (Every rank goes on to the all-gather
  // below whatever it recorded: a rank that left early would hang the others.)
  const auto last_flush = std::find_if(spans.rbegin(), spans.rend(), [](const auto& span) {
    return span.what == gemm::ActivityTimeline::kMemsetName;
  });
  const double origin_ns = last_flush == spans.rend() ? 0.0 : double(last_flush->end_ns);
  spans.erase(spans.begin(), last_flush.base());
  const OverlappedSteps steps = overlapped_steps(comm.rank(), layout.gpus, layout.chunks);
  const std::vector<std::string> gemm_steps =
      variant == Variant::overlapped ? steps.gemms : std::vector<std::string>{"GEMM 1", "GEMM 2"};
  const std::vector<std::string>& copy_steps = steps.copies;
  size_t gemm = 0, copy = 0;
  std::vector<SpanRecord> records(kMostSpans);
  for (size_t i = 0; i < spans.size() && i < records.size(); ++i) {
    const gemm::ActivitySpan& span = spans[i];
    std::string what = span.on_copy_engine ? span.what : kernel_label(span.what);
    if (span.on_copy_engine && copy < copy_steps.size()) what = copy_steps[copy++];
    if (what == "GEMM" && gemm < gemm_steps.size()) what = gemm_steps[gemm++];
    records[i] = {(double(span.start_ns) - origin_ns) / 1e3, (double(span.end_ns) - origin_ns) / 1e3,
                  true, span.on_copy_engine, {}};
    std::snprintf(records[i].what, sizeof(records[i].what), "%s", what.c_str());
  }
  const std::vector<unsigned char> all =
      comm.all_gather_bytes(records.data(), records.size() * sizeof(SpanRecord), stream);
  if (comm.rank() != 0) return;
  std::printf("\n%lld tokens, %s, %d chunk(s): each rank's timeline of one layer, us from the "
              "end of its L2 flush\n",
              (long long)layout.tokens, variant_name(variant), layout.chunks);
  for (int rank = 0; rank < comm.ranks(); ++rank) {
    const auto* theirs = reinterpret_cast<const SpanRecord*>(all.data()) + size_t(rank) * kMostSpans;
    std::printf("rank %d:\n", rank);
    for (int i = 0; i < kMostSpans && theirs[i].present; ++i)
      std::printf("  %-13s %9.1f .. %9.1f  %s\n", theirs[i].on_copy_engine ? "copy engine" : "SMs",
                  theirs[i].start_us, theirs[i].end_us, theirs[i].what);
  }
  std::fflush(stdout);
}

// What rank 0 writes to --result-file: every check of the run, as JSON (the grader reads it).
struct CheckSummary {
  bool passed = true;
  double max_normalized_error = 0;  // over every rank, variant and token count
  double mismatches = 0;
  RehearsalReport rehearsal;  // the first that failed, else the last
};

std::string json_text(const std::string& text) {
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += (c == '\n' ? ' ' : c);
  }
  return quoted + "\"";
}

// "1, 2, 4, 7, 8, 14, 16".
std::string describe_rank_counts(const std::vector<int>& counts) {
  std::string text;
  for (const int count : counts) text += (text.empty() ? "" : ", ") + std::to_string(count);
  return text;
}

bool write_result_file(const Options& options, int gpus, const CheckSummary& summary) {
  std::ofstream file(options.result_file);
  file << "{\"lesson\": 19, \"gpus\": " << gpus << ", \"chunks\": " << options.chunks
       << ", \"seed\": " << options.seed << ", \"tokens\": [";
  for (size_t i = 0; i < options.token_counts.size(); ++i)
    file << (i ? ", " : "") << options.token_counts[i];
  file << "], \"check\": {\"passed\": " << (summary.passed ? "true" : "false")
       << ", \"max_normalized_error\": " << summary.max_normalized_error
       << ", \"mismatches\": " << int64_t(summary.mismatches) << ", \"rehearsal\": {\"passed\": "
       << (summary.rehearsal.passed() ? "true" : "false") << ", \"rank_counts\": [";
  for (size_t i = 0; i < summary.rehearsal.rank_counts.size(); ++i)
    file << (i ? ", " : "") << summary.rehearsal.rank_counts[i];
  file << "], \"first_failure\": " << json_text(summary.rehearsal.first_failure) << "}}}\n";
  return bool(file);
}

// One rank's whole life. Returns its exit code: 0, or 1 if any rank's check failed (every rank
// returns the same).
int run_rank(int rank, int gpus, const Options& options, const RankChannels& channels) {
  // NEW in lesson 19: NCCL's NVLink SHARP algorithms off on every rank, before NCCL starts
  // (README, "Pitfalls").
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  CUDA_CHECK(cudaSetDevice(rank));
  const gemm::DeviceInfo device = gemm::query_device(rank);
  const Stream stream, copy_stream;
  Communicator comm(rank, gpus, channels);
  const gemm::MlpShape model;
  const std::string gpu_names = describe_gpus(comm, device.name, stream.get());

  int64_t most_tokens = 0;
  for (const int64_t tokens : options.token_counts) most_tokens = std::max(most_tokens, tokens);
  const ShardLayout largest = layout_for(model, most_tokens, gpus, options.chunks);
  const LayerWeights weights(largest, rank, options.seed, stream.get());
  const ExchangeBuffers exchange(largest, stream.get());

  if (rank == 0) {
    std::printf("lesson19: the MLP of Llama 3.1 8B, H = gelu(X W1^T + b1), Y = H W2^T (d_model "
                "%lld, d_ff %lld), tensor-parallel over %d rank(s), one process per GPU, on %s\n",
                (long long)model.d_model, (long long)model.d_ff, gpus, gpu_names.c_str());
    std::printf("NCCL %s, NCCL_NVLS_ENABLE=0 on every rank (NVLink SHARP off); each rank: %lld "
                "columns of H; overlapped variant: %d chunk(s)\n",
                nccl_version().c_str(), (long long)largest.ff_per_rank(), options.chunks);
    std::printf("check: every rank's Y_r against a one-GPU cuBLAS reference of the layer; max "
                "normalized error over the ranks (pass <= 1)\n");
    std::printf("%7s %15s %15s %15s %15s\n", "tokens", "stream order", "one-shot", "overlapped",
                "cuBLASLt+NCCL");
    std::fflush(stdout);
  }

  CheckSummary summary;
  std::vector<int64_t> timed_tokens;
  std::vector<std::vector<double>> timings;  // per timed token count: every rank's figures
  std::vector<std::vector<double>> timed_checks;  // and every rank's checks (kCheckFigures each)
  {
    // NEW in lesson 19: every rank's exchange buffers, mapped into this process.
    const PeerMemory x_shards(exchange.x_taken.get(), comm, stream.get());
    const PeerMemory receive_slots(exchange.receive_slots.get(), comm, stream.get());
    const PeerMemory x_gathered(exchange.x_gathered.get(), comm, stream.get());
    const PeerMemory flags(exchange.flags.get(), comm, stream.get());
    const PeerMemory gather_words(exchange.gather_words.get(), comm, stream.get());
    const PeerMemory reduce_words(exchange.reduce_words.get(), comm, stream.get());
    PeerBuffers peers{};
    for (int q = 0; q < gpus; ++q) {
      peers.x_gathered[q] = x_gathered.of<uint4>(q);
      peers.receive_slots[q] = receive_slots.of<uint4>(q);
      peers.flags[q] = flags.of<uint32_t>(q);
      peers.gather_words[q] = gather_words.of<uint64_t>(q);
      peers.reduce_words[q] = reduce_words.of<uint64_t>(q);
    }
    OneShotExchange one_shot(peers, rank, gpus, device.sm_count);
    gemm::PairedTimer timer(device.l2_bytes, device.ordinal);

    for (const int64_t tokens : options.token_counts) {
      // NEW in lesson 19: the copies of every rank count, rehearsed on this GPU (rehearsal.hpp).
      // Every rank finds the same, so every rank skips a token count whose rows are misplaced.
      const RehearsalReport rehearsal =
          rehearse_on_gpu(tokens, options.chunks, model.d_ff, stream.get());
      if (summary.rehearsal.passed()) summary.rehearsal = rehearsal;
      if (!rehearsal.passed()) {
        summary.passed = false;
        if (rank == 0)
          std::fprintf(stderr, "lesson19: %lld tokens: the rehearsal of the exchange FAILED: %s\n",
                       (long long)tokens, rehearsal.first_failure.c_str());
        continue;
      }
      const ShardLayout layout = layout_for(model, tokens, gpus, options.chunks);
      TensorParallelMlp mlp(layout, comm, weights, exchange, x_shards, receive_slots, one_shot,
                            gemm::lessons::lesson17(), options.seed, stream.get(),
                            copy_stream.get());
      std::vector<double> mine;
      for (const Variant variant : kVariants) {
        const gemm::VerifyReport report = mlp.check(variant);
        if (!report.passed())
          std::fprintf(stderr, "lesson19: rank %d: %lld tokens: %s FAILED: %s\n", rank,
                       (long long)tokens, variant_name(variant),
                       report.summary(layout.d_model).c_str());
        mine.insert(mine.end(), {report.max_normalized_error, double(report.mismatches)});
      }
      // Every rank decides from the same figures, so every rank times, or none does.
      const std::vector<double> checks = comm.all_gather(mine, stream.get());
      bool passed = true;
      std::vector<double> worst(std::size(kVariants), 0.0), mismatches(std::size(kVariants), 0.0);
      for (int r = 0; r < gpus; ++r)
        for (size_t v = 0; v < worst.size(); ++v) {
          const double* figures = checks.data() + (size_t(r) * worst.size() + v) * kCheckFigures;
          worst[v] = std::max(worst[v], figures[0]);
          mismatches[v] += figures[1];
          passed = passed && figures[1] == 0;
          summary.max_normalized_error = std::max(summary.max_normalized_error, figures[0]);
          summary.mismatches += figures[1];
        }
      summary.passed = summary.passed && passed;
      if (rank == 0) {
        std::printf("%7lld", (long long)tokens);
        for (size_t v = 0; v < worst.size(); ++v)
          std::printf(" %15s", check_cell(worst[v], mismatches[v]).c_str());
        std::printf("\n");
        std::fflush(stdout);
      }
      if (!passed || options.check_only) continue;
      if (options.timeline) {
        for (const Variant variant : kVariants)
          print_timeline(mlp, variant, comm, timer, stream.get());
        continue;
      }
      const TimingFigures figures = time_variants(mlp, comm, timer, options.pairs, stream.get());
      timed_tokens.push_back(tokens);
      timed_checks.push_back(checks);
      timings.push_back(comm.all_gather(figures.numbers(), stream.get()));
    }
  }
  // Barrier: every rank has closed its mappings of the others' exchange buffers (the PeerMemory
  // destructors above) before any rank frees its own (at the end of this function).
  comm.barrier(stream.get());
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  if (rank == 0 && summary.rehearsal.passed())
    std::printf("rehearsal: the copies of %s rank(s), replayed on this GPU at every token count: "
                "every row where it belongs\n",
                describe_rank_counts(summary.rehearsal.rank_counts).c_str());
  if (rank == 0 && !timings.empty() && !print_timings(timed_tokens, timings, timed_checks, options, gpus,
                                                        gpu_names)) {
    std::fprintf(stderr, "lesson19: rank 0: error: cannot write %s\n", options.csv_path.c_str());
    return gemm::kExitBadUsage;
  }
  if (rank == 0 && !options.result_file.empty() && !write_result_file(options, gpus, summary)) {
    std::fprintf(stderr, "lesson19: rank 0: error: cannot write %s\n", options.result_file.c_str());
    return gemm::kExitBadUsage;
  }
  return summary.passed ? gemm::kExitPass : gemm::kExitCheckFailed;
}

}  // namespace lesson19

int main(int argc, char** argv) {
  using namespace lesson19;
  const auto fail = [](int code, const std::string& message) {
    std::fprintf(stderr, "lesson19: error: %s\n", message.c_str());
    return code;
  };
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const gemm::UsageError& error) {
    return fail(gemm::kExitBadUsage, std::string(error.what()) + " (see --help)");
  }
  if (options.help) {
    std::printf("%s", kUsage);
    return gemm::kExitPass;
  }
  const gemm::MlpShape model;
  // The contract, before any GPU is touched where --gpus says how many (else once they are
  // counted).
  const auto contract_refusal = [&](int gpus) -> std::optional<std::string> {
    for (const int64_t tokens : options.token_counts)
      if (auto violation = contract_violation(layout_for(model, tokens, gpus, options.chunks)))
        return violation;
    return std::nullopt;
  };
  if (options.gpus != 0)
    if (const auto refusal = contract_refusal(options.gpus))
      return fail(gemm::kExitBadUsage, *refusal);

  // The parent never calls CUDA (ranks.hpp): a child of its own looks at the GPUs.
  const std::optional<GpuSurvey> survey =
      gemm::run_in_child<GpuSurvey>([&options] { return survey_gpus(options.gpus); });
  if (!survey) return fail(gemm::kExitCudaError, "the survey of the GPUs failed");
  if (survey->exit_code != gemm::kExitPass) return fail(survey->exit_code, survey->message);
  const int gpus = options.gpus != 0 ? options.gpus : survey->device_count;
  if (gpus > survey->device_count)
    return fail(gemm::kExitBadUsage, "--gpus " + std::to_string(gpus) + ", but only " +
                                         std::to_string(survey->device_count) +
                                         " CUDA GPU(s) are visible");
  if (const auto refusal = contract_refusal(gpus)) return fail(gemm::kExitBadUsage, *refusal);

  return gemm::run_ranks(gpus, options.timeout_seconds,
                   [&options, gpus](int rank, const RankChannels& channels) {
                     return run_rank(rank, gpus, options, channels);
                   });
}
