#pragma once
// Lesson 19's plan, in plain host code that the host tests check without a GPU: the command line,
// the contract on GPUs, chunks and tokens, where every row goes in the overlapped variant, the
// error each variant's arithmetic may add, and timing counts that every rank agrees on.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <iterator>
#include <string>
#include <vector>

#include "common/harness/cli.hpp"
#include "common/harness/timing.hpp"
#include "common/harness/verify.hpp"

namespace lesson19 {

// ---- The ways to run the layer -----------------------------------------------------------------

// stream_order, one_shot and overlapped are the layer's candidates: it runs whichever of them
// measured fastest at its token count (choose_layer). cublas_nccl is the reference everyone
// compares with.
enum class Variant { stream_order, one_shot, overlapped, cublas_nccl };
inline constexpr Variant kVariants[] = {Variant::stream_order, Variant::one_shot,
                                        Variant::overlapped, Variant::cublas_nccl};
inline constexpr Variant kCandidates[] = {Variant::stream_order, Variant::one_shot,
                                          Variant::overlapped};

inline const char* variant_name(Variant variant) {
  switch (variant) {
    case Variant::stream_order: return "stream order (NCCL + lesson 17)";
    case Variant::one_shot: return "one-shot (peer memory + lesson 17)";
    case Variant::overlapped: return "overlapped (copy engines + lesson 17)";
    case Variant::cublas_nccl: return "cuBLASLt + NCCL";
  }
  return "?";
}

// A short name for tables and CSV files.
inline const char* variant_label(Variant variant) {
  switch (variant) {
    case Variant::stream_order: return "stream";
    case Variant::one_shot: return "one-shot";
    case Variant::overlapped: return "overlapped";
    case Variant::cublas_nccl: return "cuBLASLt";
  }
  return "?";
}

// NEW in lesson 19: the layer's choice at one token count. Every rank has measured every candidate
// (medians of a few runs); `slowest_ms[i]` is the slowest rank's median for kCandidates[i], since a
// layer ends when its slowest rank does. The fastest candidate wins; a tie goes to the earlier one
// in kCandidates (the simpler schedule). Every rank gets the same figures, so every rank chooses
// the same variant, and their collectives match.
inline Variant choose_layer(const std::vector<double>& slowest_ms) {
  size_t best = 0;
  for (size_t i = 1; i < slowest_ms.size() && i < std::size(kCandidates); ++i)
    if (slowest_ms[i] < slowest_ms[best]) best = i;
  return kCandidates[best];
}

// ---- The command line --------------------------------------------------------------------------

struct Options {
  int gpus = 0;  // --gpus G; 0: every visible GPU
  std::vector<int64_t> token_counts = {1, 64, 256, 1024, 4096, 8192};  // --tokens
  int chunks = 1;                 // --chunks: the overlapped variant's pieces of each rank's rows
  bool check_only = false;        // --check-only: no timing
  bool timeline = false;          // --timeline: each rank's timeline of one layer per variant, no timing
  uint64_t seed = 1;              // --seed: the random inputs, the same on every rank
  std::string csv_path;           // --csv FILE: rank 0 also writes the figures there
  std::string commit;             // --commit SHA: recorded in every row of the CSV
  int pairs = 30;                 // --iters: timed pairs (at least; more for short layers)
  int timeout_seconds = 900;      // --timeout: the parent stops every rank after this long
  bool help = false;
};

inline const char* kUsage =
    "usage: lesson19 [--gpus G] [--tokens 1,64,256,1024,4096,8192] [--chunks C]\n"
    "                [--check-only | --timeline] [--seed S] [--iters PAIRS] [--csv FILE]\n"
    "                [--commit SHA] [--timeout SECONDS]\n"
    "  The MLP of Llama 3.1 8B, H = gelu(X W1^T + b1), Y = H W2^T, tensor-parallel over G\n"
    "  GPUs (default: every visible GPU), one process per GPU, checked and timed four ways:\n"
    "  NCCL and lesson 17 in stream order; peer memory and lesson 17 in stream order (one-shot);\n"
    "  copy engines overlapped with lesson 17 in C chunks; cuBLASLt and NCCL. The layer runs the\n"
    "  fastest of the first three at each token count, measured. G must split d_ff into slices\n"
    "  of a multiple of 8 columns, and be at most 16; any token count >= 1 (each rank's rows are\n"
    "  padded to whole chunks). --timeline: after the check, each rank's timeline of one\n"
    "  layer of each variant (CUPTI), instead of the timing.\n"
    "  Exit codes: 0 pass, 1 check failed, 2 no CUDA GPU, 3 a GPU cannot run the lesson,\n"
    "  4 bad command line, 5 CUDA or NCCL error (a rank that hangs included).\n";

// Parses argv[1..argc). Throws gemm::UsageError naming the flag for anything it cannot accept.
// Does not check the contract (contract_violation) or the number of GPUs.
inline Options parse_options(int argc, const char* const* argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help") {
      options.help = true;
      continue;
    }
    if (flag == "--check-only") {
      options.check_only = true;
      continue;
    }
    if (flag == "--timeline") {
      options.timeline = true;
      continue;
    }
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw gemm::UsageError(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--gpus") options.gpus = int(gemm::parse_integer(flag, value(), 1, 1024));
    else if (flag == "--tokens")
      options.token_counts = gemm::parse_integer_list(flag, value(), 1, int64_t(1) << 20);
    else if (flag == "--chunks") options.chunks = int(gemm::parse_integer(flag, value(), 1, 64));
    else if (flag == "--seed")
      options.seed = uint64_t(gemm::parse_integer(flag, value(), 0, INT64_MAX));
    else if (flag == "--iters") options.pairs = int(gemm::parse_integer(flag, value(), 1, 10000));
    else if (flag == "--timeout")
      options.timeout_seconds = int(gemm::parse_integer(flag, value(), 1, 24 * 3600));
    else if (flag == "--csv") {
      options.csv_path = value();
      if (options.csv_path.empty()) throw gemm::UsageError("--csv needs a file name");
    } else if (flag == "--commit")
      options.commit = value();
    else
      throw gemm::UsageError("unknown option '" + flag + "'");
  }
  return options;
}

// ---- The contract ------------------------------------------------------------------------------
//
// How the layer is cut, for T tokens over G ranks in c chunks:
//
//   R = ceil(T / (G c)) c   rows of X (and of Y) that each rank holds: rank r holds rows
//                           [r R, (r+1) R), of which the tokens are those below T
//   S = R / c               rows of a chunk: the overlapped variant cuts every rank's rows into c
//   F = d_ff / G            columns of H (and rows of W1, columns of W2) that each rank owns
//
// NEW in lesson 19: any token count. When G c does not divide T, each rank's rows are padded to a
// whole number of chunks, so the last ranks hold fewer tokens (or none) and rows of zeros after
// them: with T = 5, G = 2, c = 1, R = 3, rank 0 holds t0 t1 t2 and rank 1 t3 t4 and one row of
// zeros. The padding rows are always the last G R - T rows of the gathered X, every variant
// computes them like any other row (at most G c - 1 of them), and no check reads them.
struct ShardLayout {
  int64_t tokens = 0;   // T
  int64_t d_model = 0;  // D
  int64_t d_ff = 0;
  int gpus = 1;    // G
  int chunks = 1;  // c

  int64_t rows_per_rank() const {  // R
    const int64_t per_chunk = (tokens + int64_t(gpus) * chunks - 1) / (int64_t(gpus) * chunks);
    return per_chunk * chunks;
  }
  int64_t rows_per_chunk() const { return rows_per_rank() / chunks; }  // S
  int64_t padded_tokens() const { return gpus * rows_per_rank(); }     // G R
  int64_t ff_per_rank() const { return d_ff / gpus; }                  // F
  // The tokens among rank `rank`'s rows: its first tokens_of(rank) rows; the rest are padding.
  int64_t tokens_of(int rank) const {
    return std::clamp<int64_t>(tokens - rank * rows_per_rank(), 0, rows_per_rank());
  }
};

// The most ranks the one-shot variant's kernels take (one pointer of each rank's buffers each).
inline constexpr int kMostRanks = 16;

// Whether G ranks can share d_ff: each must get a slice of whole 16-byte rows (a multiple of 8
// columns: the shape contract of the GEMMs, whose N or K the slice is), and there are at most
// kMostRanks of them. One line naming the rule, with the counts that work, or nothing.
inline std::optional<std::string> gpu_count_violation(int gpus, int64_t d_ff) {
  const auto fits = [d_ff](int64_t g) { return d_ff % g == 0 && (d_ff / g) % 8 == 0; };
  if (gpus >= 1 && gpus <= kMostRanks && fits(gpus)) return std::nullopt;
  std::string counts;
  for (int64_t g = 1; g <= kMostRanks; ++g)
    if (fits(g)) counts += (counts.empty() ? "" : ", ") + std::to_string(g);
  return std::to_string(gpus) + " GPU(s) cannot split d_ff = " + std::to_string(d_ff) +
         " into equal slices of a multiple of 8 columns, at most " + std::to_string(kMostRanks) +
         " GPUs (--gpus " + counts + ")";
}

// The whole contract of one run: the GPUs share d_ff, and there is at least one token. One line
// naming the rule, or nothing.
inline std::optional<std::string> contract_violation(const ShardLayout& layout) {
  if (auto violation = gpu_count_violation(layout.gpus, layout.d_ff)) return violation;
  if (layout.tokens < 1)
    return "--tokens " + std::to_string(layout.tokens) + ": the token count must be at least 1";
  return std::nullopt;
}

// ---- Where the rows go in the overlapped variant -----------------------------------------------
//
// The gathered X, H and P are in token order, as NCCL's all-gather leaves them: rank q's rows are
// rows [q R, (q+1) R), and chunk s of rank q is rows q R + s S .. q R + (s+1) S. Rank r takes the
// ranks' rows in turn:
//   - the first GEMM starts with its own rows, which it reads from its shard with no copy, then
//     takes rank r + 1's, r + 2's, ... (mod G), each as soon as the copy engines have pulled it;
//   - the second GEMM takes the other ranks' rows first, r + 1's to r - 1's, so that each is
//     pushed to its owner while the next is computed, and its own rows last: they stay, written
//     straight into its own receive slot.
// With G = 2, c = 1 (R = 4 rows per rank), token rows t0..t7, on rank 0:
//
//   first GEMM:  t0 t1 t2 t3 (its shard)  then  t4 t5 t6 t7 (pulled from rank 1)
//   second GEMM: t4 t5 t6 t7 (pushed to rank 1's slot 0)  then  t0 t1 t2 t3 (its own slot 0)

// The rank whose rows step `step` (0 .. G-1) of the first GEMM takes on rank `rank`: its own first.
inline int first_gemm_rank(int rank, int step, int gpus) { return (rank + step) % gpus; }

// The rank whose rows step `step` (0 .. G-1) of the second GEMM takes on rank `rank`: the next
// rank's first, its own last.
inline int second_gemm_rank(int rank, int step, int gpus) { return (rank + 1 + step) % gpus; }

// A run of contiguous rows copied from one buffer to another.
struct RowBlock {
  int64_t source_row = 0;
  int64_t destination_row = 0;
  int64_t rows = 0;
};

// The gather: chunk `chunk` of rank `source_rank`'s shard of X (rows of the shard) into the
// gathered X (rows of X). On the pulling rank's own shard it names the rows the first GEMM reads
// in place.
inline RowBlock pulled_block(const ShardLayout& layout, int chunk, int source_rank) {
  const int64_t rows = layout.rows_per_chunk();
  return {chunk * rows, source_rank * layout.rows_per_rank() + chunk * rows, rows};
}

// The scatter: chunk `chunk` of the rows that rank `destination_rank` owns, from this rank's P
// (rows of P) into this rank's slot of the destination's receive buffer (rows of a slot). On this
// rank's own rows it names where the second GEMM writes them in its own slot.
inline RowBlock pushed_block(const ShardLayout& layout, int chunk, int destination_rank) {
  const int64_t rows = layout.rows_per_chunk();
  return {destination_rank * layout.rows_per_rank() + chunk * rows, chunk * rows, rows};
}

// What each GEMM and each copy of one overlapped layer on rank `rank` works on, in the order the
// rank issues them (for the timeline: the records of each kind come in that order).
struct OverlappedSteps {
  std::vector<std::string> gemms;   // 2 G c: the first GEMM's blocks, then the second's
  std::vector<std::string> copies;  // 2 (G - 1) c: the pulls, then the pushes
};
inline OverlappedSteps overlapped_steps(int rank, int gpus, int chunks) {
  OverlappedSteps steps;
  const auto rows_of = [chunks](int owner, int chunk) {
    return "rows of rank " + std::to_string(owner) +
           (chunks > 1 ? ", chunk " + std::to_string(chunk) : std::string());
  };
  for (int step = 0; step < gpus; ++step)
    for (int chunk = 0; chunk < chunks; ++chunk)
      steps.gemms.push_back("GEMM 1, " + rows_of(first_gemm_rank(rank, step, gpus), chunk));
  for (int step = 0; step < gpus; ++step)
    for (int chunk = 0; chunk < chunks; ++chunk)
      steps.gemms.push_back("GEMM 2, " + rows_of(second_gemm_rank(rank, step, gpus), chunk));
  for (int step = 1; step < gpus; ++step)
    for (int chunk = 0; chunk < chunks; ++chunk)
      steps.copies.push_back("pull " + rows_of(first_gemm_rank(rank, step, gpus), chunk));
  for (int step = 0; step < gpus - 1; ++step)
    for (int chunk = 0; chunk < chunks; ++chunk)
      steps.copies.push_back("push " + rows_of(second_gemm_rank(rank, step, gpus), chunk));
  return steps;
}

// ---- What the arithmetic may add to the error --------------------------------------------------
//
// The course's rule: |y - ref| <= 2^-7 |ref| + 2^-7 rms(ref). Across ranks every rank's partial P_q
// is rounded to bf16 before the sum, and NCCL's sum rounds what it has added so far to bf16 at
// every step. Each of those roundings errs by at most 2^-8 of the value it rounds, and every such
// value is at most sum_q |P_q| in magnitude. The check therefore adds 2^-7 sum_q |P_q| (twice the
// bound, the course's headroom) for each rounding of a value that is not the output itself
// (README, "How it is checked"):
//   - one rank: none (P_0 is Y);
//   - the one-shot and overlapped variants: the partials once (summed in fp32, rounded once);
//   - NCCL's reduce-scatter: the partials, then G - 2 intermediate sums, whatever order it adds
//     them in: G - 1.
inline int partial_roundings(Variant variant, int gpus) {
  if (gpus <= 1) return 0;
  return variant == Variant::overlapped || variant == Variant::one_shot ? 1 : gpus - 1;
}

// The allowance per unit of the partials' magnitude |P_0| + ... + |P_G-1|: 2^-7 for each of the
// `roundings` above (the course's verify module adds it to its rule: gemm::ExtraAllowance).
inline double partial_allowance_per_unit(int roundings) { return gemm::kTolerance * roundings; }

// The allowed error of one element of Y: the course's (gemm::allowed_error) plus the allowance for
// the partials' roundings. With no rounding of partials it is exactly the course's rule.
inline double allowed_error_across_ranks(double reference, double reference_rms,
                                         double partial_magnitude, int roundings) {
  return gemm::allowed_error(reference, reference_rms) +
         partial_allowance_per_unit(roundings) * partial_magnitude;
}

// ---- Timing counts that every rank agrees on ---------------------------------------------------
//
// The paired protocol sizes its warm-up and its number of pairs from what it measures. Every
// variant here runs collectives, and a collective that one rank calls more often than another
// waits forever. So the ranks first agree on the slowest rank's time of one layer, and every
// rank derives the same counts from it, as the course's defaults would (common/harness/timing.hpp): at
// least `pairs` timed pairs and 0.2 s of the lesson's runs, at least 5 warm-up pairs and 0.3 s.
// The options returned make the timer measure nothing to decide (warmup_seconds and
// min_timed_seconds 0).
inline gemm::TimingOptions agreed_timing_options(int pairs, double slowest_layer_ms) {
  gemm::TimingOptions asked;  // the course's defaults, with the pairs asked for
  asked.pairs = pairs;
  const double pair_ms = 2 * slowest_layer_ms;
  gemm::TimingOptions agreed = asked;
  agreed.pairs = gemm::planned_pairs(asked, pair_ms, slowest_layer_ms);
  agreed.max_pairs = agreed.pairs;
  agreed.min_timed_seconds = 0;
  agreed.warmup = std::max(asked.warmup,
                           int(std::ceil(asked.warmup_seconds * 1e3 / std::max(pair_ms, 1e-3))));
  agreed.warmup_seconds = 0;
  return agreed;
}

}  // namespace lesson19
