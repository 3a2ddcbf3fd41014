#pragma once
// Lesson 19's plan, in plain host code that the host tests check without a GPU: the command line,
// the contract on GPUs, chunks and tokens, the error each variant's arithmetic may add, and timing
// counts that every rank agrees on. Where every row goes is rows.hpp, the lesson's exercise.

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
#include "lessons/19_tensor_parallel/rows.hpp"

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
  std::string result_file;        // --result-file FILE: rank 0 writes the checks there, as JSON
  int pairs = 30;                 // --iters: timed pairs (at least; more for short layers)
  int timeout_seconds = 900;      // --timeout: the parent stops every rank after this long
  bool help = false;
};

inline const char* kUsage =
    "usage: lesson19 [--gpus G] [--tokens 1,64,256,1024,4096,8192] [--chunks C]\n"
    "                [--check-only | --timeline] [--seed S] [--iters PAIRS] [--csv FILE]\n"
    "                [--commit SHA] [--timeout SECONDS] [--result-file FILE]\n"
    "  The MLP of Llama 3.1 8B, H = gelu(X W1^T + b1), Y = H W2^T, tensor-parallel over G\n"
    "  GPUs (default: every visible GPU), one process per GPU, checked and timed four ways:\n"
    "  NCCL and lesson 17 in stream order; peer memory and lesson 17 in stream order (one-shot);\n"
    "  copy engines overlapped with lesson 17 in C chunks; cuBLASLt and NCCL. The layer runs the\n"
    "  fastest of the first three at each token count, measured. G must split d_ff into slices\n"
    "  of a multiple of 8 columns, and be at most 16; any token count >= 1 (each rank's rows are\n"
    "  padded to whole chunks). --timeline: after the check, each rank's timeline of one\n"
    "  layer of each variant (CUPTI), instead of the timing. Every check also rehearses, on\n"
    "  one GPU, the copies of every rank count that splits d_ff (the rows' map, rows.hpp).\n"
    "  --result-file: the checks as JSON (the grader reads it).\n"
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
    else if (flag == "--result-file") {
      options.result_file = value();
      if (options.result_file.empty()) throw gemm::UsageError("--result-file needs a file name");
    }
    else
      throw gemm::UsageError("unknown option '" + flag + "'");
  }
  return options;
}

// ---- The contract ------------------------------------------------------------------------------
//
// How the layer is cut, and where every row goes: rows.hpp (the lesson's exercise).

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

// What each GEMM and each copy of one overlapped layer on rank `rank` works on, in the order the
// rank issues them (for the timeline: the records of each kind come in that order).
struct OverlappedSteps {
  std::vector<std::string> gemms;   // 1 + G c: the first GEMM (one launch), the second's blocks
  std::vector<std::string> copies;  // 2 (G - 1) c: the pulls, then the pushes
};
inline OverlappedSteps overlapped_steps(int rank, int gpus, int chunks) {
  OverlappedSteps steps;
  const auto rows_of = [chunks](int owner, int chunk) {
    return "rows of rank " + std::to_string(owner) +
           (chunks > 1 ? ", chunk " + std::to_string(chunk) : std::string());
  };
  steps.gemms.push_back("GEMM 1, every row");
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
