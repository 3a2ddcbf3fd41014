// Lesson 19's plan (lessons/19_tensor_parallel/plan.hpp) and processes (ranks.hpp), without a GPU:
// the command line, the contract and its messages, where every token row goes in the overlapped
// variant, the allowance for the partials' roundings, timing counts that do not depend on what a
// rank measured, and the parent that starts, watches and stops the ranks.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "lessons/19_tensor_parallel/plan.hpp"
#include "lessons/19_tensor_parallel/rehearsal.hpp"
#include "lessons/19_tensor_parallel/rows_arrival.hpp"
#include "common/multi_gpu/ranks.hpp"

namespace {

using lesson19::Options;
using lesson19::ShardLayout;
using lesson19::Variant;

constexpr int64_t kDModel = 4096, kDff = 14336;  // Llama 3.1 8B's MLP (lesson 17's MlpShape)

Options parse(std::vector<const char*> arguments) {
  arguments.insert(arguments.begin(), "lesson19");
  return lesson19::parse_options(int(arguments.size()), arguments.data());
}

// The message of the UsageError that parsing `arguments` throws ("" if it throws none).
std::string usage_error(std::vector<const char*> arguments) {
  try {
    parse(std::move(arguments));
  } catch (const gemm::UsageError& error) {
    return error.what();
  }
  return "";
}

ShardLayout layout(int64_t tokens, int gpus, int chunks) {
  return {tokens, kDModel, kDff, gpus, chunks};
}

// ---- The command line --------------------------------------------------------------------------

TEST(TensorParallelOptions, DefaultsAreEveryGpuOneChunkAndDecodeToPrefillTokenCounts) {
  const Options options = parse({});
  EXPECT_EQ(options.gpus, 0);
  EXPECT_EQ(options.chunks, 1);
  EXPECT_EQ(options.token_counts, (std::vector<int64_t>{1, 64, 256, 1024, 4096, 8192}));
  EXPECT_FALSE(options.check_only);
  EXPECT_FALSE(options.help);
}

TEST(TensorParallelOptions, ReadsEveryFlag) {
  const Options options = parse({"--gpus", "2", "--tokens", "256,1024", "--chunks", "8",
                                 "--check-only", "--seed", "7", "--csv", "out.csv", "--iters",
                                 "12", "--timeout", "60", "--commit", "abc1234",
                                 "--result-file", "run.json"});
  EXPECT_EQ(options.gpus, 2);
  EXPECT_EQ(options.token_counts, (std::vector<int64_t>{256, 1024}));
  EXPECT_EQ(options.chunks, 8);
  EXPECT_TRUE(options.check_only);
  EXPECT_EQ(options.seed, 7u);
  EXPECT_EQ(options.csv_path, "out.csv");
  EXPECT_EQ(options.pairs, 12);
  EXPECT_EQ(options.timeout_seconds, 60);
  EXPECT_EQ(options.commit, "abc1234");
  EXPECT_EQ(options.result_file, "run.json");
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_TRUE(parse({"--timeline"}).timeline);
  EXPECT_FALSE(parse({}).timeline);
}

TEST(TensorParallelOptions, RejectsBadCommandLinesNamingTheFlag) {
  EXPECT_EQ(usage_error({"--m", "512"}), "unknown option '--m'");
  EXPECT_EQ(usage_error({"--bogus"}), "unknown option '--bogus'");
  EXPECT_EQ(usage_error({"--chunks"}), "--chunks needs a value");
  EXPECT_NE(usage_error({"--gpus", "0"}).find("--gpus = 0 is out of range"), std::string::npos);
  EXPECT_NE(usage_error({"--chunks", "0"}).find("--chunks = 0 is out of range"), std::string::npos);
  EXPECT_NE(usage_error({"--tokens", "1024,0"}).find("--tokens"), std::string::npos);
  EXPECT_NE(usage_error({"--tokens", "many"}).find("--tokens"), std::string::npos);
  EXPECT_EQ(usage_error({"--tokens", ""}), "--tokens needs a list of integers, got ''");
  EXPECT_EQ(usage_error({"--csv", ""}), "--csv needs a file name");
  EXPECT_EQ(usage_error({"--result-file", ""}), "--result-file needs a file name");
  EXPECT_NE(usage_error({"--timeout", "-1"}).find("--timeout"), std::string::npos);
}

// ---- The contract ------------------------------------------------------------------------------

TEST(TensorParallelContract, TheGpusMustSplitDffIntoSlicesOfWholeVectors) {
  for (const int gpus : {1, 2, 4, 7, 8, 14, 16})
    EXPECT_FALSE(lesson19::gpu_count_violation(gpus, kDff)) << gpus;
  // 28 splits d_ff, but the one-shot kernels take at most kMostRanks ranks.
  for (const int gpus : {3, 5, 6, 9, 10, 12, 15, 0, 28}) {
    const auto violation = lesson19::gpu_count_violation(gpus, kDff);
    ASSERT_TRUE(violation) << gpus;
    EXPECT_EQ(*violation, std::to_string(gpus) +
                              " GPU(s) cannot split d_ff = 14336 into equal slices of a multiple "
                              "of 8 columns, at most 16 GPUs (--gpus 1, 2, 4, 7, 8, 14, 16)");
  }
  // A slice must be a multiple of 8 columns, not only a whole number of them.
  EXPECT_TRUE(lesson19::gpu_count_violation(2, 8 * 3));
  EXPECT_FALSE(lesson19::gpu_count_violation(3, 8 * 3));
}

TEST(TensorParallelContract, AnyTokenCountFromOne) {
  for (const int64_t tokens : {1, 2, 3, 7, 63, 1020, 1024, 1028, 8191})
    for (const int gpus : {1, 2, 4, 7})
      for (const int chunks : {1, 3, 4})
        EXPECT_FALSE(lesson19::contract_violation(layout(tokens, gpus, chunks)))
            << tokens << " tokens, " << gpus << " GPUs, " << chunks << " chunks";
  for (const int64_t tokens : {int64_t(0), int64_t(-4)}) {
    const auto violation = lesson19::contract_violation(layout(tokens, 2, 4));
    ASSERT_TRUE(violation) << tokens;
    EXPECT_EQ(*violation,
              "--tokens " + std::to_string(tokens) + ": the token count must be at least 1");
  }
  // The GPU count is part of the contract too, and comes first.
  const auto violation = lesson19::contract_violation(layout(1024, 3, 1));
  ASSERT_TRUE(violation);
  EXPECT_NE(violation->find("3 GPU(s) cannot split d_ff"), std::string::npos);
}

// Every rank holds R rows, a whole number of chunks; the tokens fill the ranks in order, and what
// is left is padding, all of it after the last token and less than one row per rank and chunk.
TEST(TensorParallelContract, TheRowsArePaddedToWholeChunks) {
  for (int64_t tokens = 1; tokens <= 200; ++tokens)
    for (const int gpus : {1, 2, 4, 7, 8})
      for (const int chunks : {1, 2, 3}) {
        const ShardLayout l = layout(tokens, gpus, chunks);
        SCOPED_TRACE(testing::Message() << tokens << " tokens, " << gpus << " GPUs, " << chunks
                                        << " chunks");
        ASSERT_EQ(l.rows_per_rank() % chunks, 0);
        ASSERT_EQ(l.rows_per_chunk() * chunks, l.rows_per_rank());
        ASSERT_GE(l.padded_tokens(), tokens);
        ASSERT_LT(l.padded_tokens() - tokens, int64_t(gpus) * chunks);
        int64_t next_token = 0;
        for (int rank = 0; rank < gpus; ++rank) {
          // Rank r's tokens are its first rows, and they continue where rank r - 1's ended.
          if (l.tokens_of(rank) > 0) {
            ASSERT_EQ(next_token, rank * l.rows_per_rank());
          }
          next_token += l.tokens_of(rank);
          // A rank that is not full is the last with tokens.
          if (l.tokens_of(rank) < l.rows_per_rank()) {
            for (int later = rank + 1; later < gpus; ++later) ASSERT_EQ(l.tokens_of(later), 0);
          }
        }
        ASSERT_EQ(next_token, tokens);
      }
  // The README's example: 5 tokens on 2 ranks, one chunk: t0 t1 t2 | t3 t4 and a row of zeros.
  const ShardLayout five = layout(5, 2, 1);
  EXPECT_EQ(five.rows_per_rank(), 3);
  EXPECT_EQ(five.tokens_of(0), 3);
  EXPECT_EQ(five.tokens_of(1), 2);
  // One token on two ranks: rank 1 holds only padding, and checks nothing.
  const ShardLayout one = layout(1, 2, 1);
  EXPECT_EQ(one.rows_per_rank(), 1);
  EXPECT_EQ(one.tokens_of(0), 1);
  EXPECT_EQ(one.tokens_of(1), 0);
}

// ---- The layer's choice ------------------------------------------------------------------------

TEST(TensorParallelChoice, TheFastestCandidateOnItsSlowestRank) {
  using lesson19::choose_layer;
  // kCandidates: stream order, one-shot, overlapped.
  EXPECT_EQ(choose_layer({95.0, 70.0, 160.0}), Variant::one_shot);
  EXPECT_EQ(choose_layer({1800.0, 1700.0, 1530.0}), Variant::overlapped);
  EXPECT_EQ(choose_layer({100.0, 101.0, 102.0}), Variant::stream_order);
  // A tie goes to the earlier, simpler schedule.
  EXPECT_EQ(choose_layer({80.0, 80.0, 90.0}), Variant::stream_order);
  EXPECT_EQ(choose_layer({90.0, 80.0, 80.0}), Variant::one_shot);
  // The reference is never a candidate.
  for (const Variant candidate : lesson19::kCandidates) EXPECT_NE(candidate, Variant::cublas_nccl);
}

// ---- Where the rows go -------------------------------------------------------------------------

// The overlapped variant's copies, replayed on token numbers in host memory, as every run of the
// lesson replays them on its GPU (rehearsal.hpp): for every rank count that splits d_ff, every
// rank's shard pulled into its gathered X (pulled_block), every rank's P pushed into its slot of
// every owner (pushed_block); every token must land once, in its row.
TEST(TensorParallelRows, EveryTokenRowLandsOnceInItsRankAndPosition) {
  for (const int chunks : {1, 2, 3, 4, 8})
    for (const int64_t tokens : {1, 2, 5, 7, 64, 97, 1000, 4099}) {
      SCOPED_TRACE(testing::Message() << tokens << " tokens, " << chunks << " chunks");
      lesson19::rehearsal::HostRows buffers;
      const lesson19::RehearsalReport report =
          lesson19::rehearse_exchange(tokens, chunks, kDff, buffers);
      EXPECT_TRUE(report.passed()) << report.first_failure;
      EXPECT_EQ(report.rank_counts, (std::vector<int>{1, 2, 4, 7, 8, 14, 16}));
    }
}

// The rehearsal's verdict on the layout itself: every token held, whole chunks, the fewest rows.
TEST(TensorParallelRows, TheRehearsalNamesAWrongLayout) {
  EXPECT_FALSE(lesson19::rehearsal::layout_fault(layout(5, 2, 1)));
  EXPECT_FALSE(lesson19::rehearsal::layout_fault(layout(1, 16, 4)));
  lesson19::RowBlock inside{0, 4, 4};
  EXPECT_TRUE(lesson19::rehearsal::inside(inside, 4, 8));
  EXPECT_FALSE(lesson19::rehearsal::inside(inside, 3, 8));
  EXPECT_FALSE(lesson19::rehearsal::inside(inside, 4, 7));
  EXPECT_FALSE(lesson19::rehearsal::inside({-1, 0, 1}, 4, 8));
}

TEST(TensorParallelRows, TheGatheredXIsInTokenOrder) {
  // The README's picture: 2 ranks of 4 rows, 2 chunks. Gathered: t0 t1 t2 t3 t4 t5 t6 t7.
  const ShardLayout l = layout(8, 2, 2);
  std::vector<int64_t> gathered(8, -1);
  for (int chunk = 0; chunk < 2; ++chunk)
    for (int source = 0; source < 2; ++source) {
      const lesson19::RowBlock block = lesson19::pulled_block(l, chunk, source);
      for (int64_t i = 0; i < block.rows; ++i)
        gathered[size_t(block.destination_row + i)] = source * 4 + block.source_row + i;
    }
  EXPECT_EQ(gathered, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  const lesson19::RowBlock second_chunk_to_rank_1 = lesson19::pushed_block(l, 1, 1);
  EXPECT_EQ(second_chunk_to_rank_1.source_row, 6);       // t6 t7 of P
  EXPECT_EQ(second_chunk_to_rank_1.destination_row, 2);  // rows 2, 3 of rank 1's shard
  EXPECT_EQ(second_chunk_to_rank_1.rows, 2);
}

// Each GEMM takes every rank's rows exactly once: the first starts with the rank's own rows (no
// copy to wait for), the second ends with them (no copy left to make).
TEST(TensorParallelRows, OwnRowsFirstInTheFirstGemmAndLastInTheSecond) {
  for (const int gpus : {1, 2, 4, 7, 8})
    for (int rank = 0; rank < gpus; ++rank) {
      std::vector<int> first_seen(size_t(gpus), 0), second_seen(size_t(gpus), 0);
      for (int step = 0; step < gpus; ++step) {
        ++first_seen[size_t(lesson19::first_gemm_rank(rank, step, gpus))];
        ++second_seen[size_t(lesson19::second_gemm_rank(rank, step, gpus))];
      }
      EXPECT_EQ(first_seen, std::vector<int>(size_t(gpus), 1)) << gpus << " GPUs, rank " << rank;
      EXPECT_EQ(second_seen, std::vector<int>(size_t(gpus), 1)) << gpus << " GPUs, rank " << rank;
      EXPECT_EQ(lesson19::first_gemm_rank(rank, 0, gpus), rank);
      EXPECT_EQ(lesson19::second_gemm_rank(rank, gpus - 1, gpus), rank);
    }
}

// The timeline names each GEMM and copy by the order the rank issues them.
TEST(TensorParallelRows, TheTimelineNamesTheStepsInTheirOrder) {
  const lesson19::OverlappedSteps two = lesson19::overlapped_steps(0, 2, 1);
  EXPECT_EQ(two.gemms, (std::vector<std::string>{"GEMM 1, every row", "GEMM 2, rows of rank 1",
                                                 "GEMM 2, rows of rank 0"}));
  EXPECT_EQ(two.copies, (std::vector<std::string>{"pull rows of rank 1", "push rows of rank 1"}));
  const lesson19::OverlappedSteps three = lesson19::overlapped_steps(2, 3, 2);
  ASSERT_EQ(three.gemms.size(), 7u);
  ASSERT_EQ(three.copies.size(), 8u);
  EXPECT_EQ(three.gemms[0], "GEMM 1, every row");
  EXPECT_EQ(three.gemms[1], "GEMM 2, rows of rank 0, chunk 0");
  EXPECT_EQ(three.gemms[6], "GEMM 2, rows of rank 2, chunk 1");
  EXPECT_EQ(three.copies[0], "pull rows of rank 0, chunk 0");
  EXPECT_EQ(three.copies[7], "push rows of rank 1, chunk 1");
  EXPECT_TRUE(lesson19::overlapped_steps(0, 1, 4).copies.empty());
}

// The overlapped variant's order of rows: its own rank's rows first, then the next rank's, and
// so on; a permutation of the rows that keeps each rank's block whole and in order.
TEST(TensorParallelRows, TheTakenOrderStartsWithTheRanksOwnRows) {
  for (const int gpus : {1, 2, 3, 4, 8})
    for (const int64_t tokens : {int64_t(1), int64_t(7), int64_t(1000)}) {
      lesson19::ShardLayout layout{tokens, 4096, 14336, gpus, 2};
      const int64_t r = layout.rows_per_rank();
      for (int rank = 0; rank < gpus; ++rank) {
        std::vector<int> hits(size_t(layout.padded_tokens()), 0);
        for (int64_t row = 0; row < layout.padded_tokens(); ++row) {
          const int64_t taken = lesson19::taken_row(layout, rank, row);
          ASSERT_GE(taken, 0);
          ASSERT_LT(taken, layout.padded_tokens());
          ++hits[size_t(taken)];
          const int owner = int(row / r);
          EXPECT_EQ(taken / r, (owner - rank + gpus) % gpus) << "row " << row << ", rank " << rank;
          EXPECT_EQ(taken % r, row % r);
        }
        EXPECT_EQ(hits, std::vector<int>(hits.size(), 1)) << gpus << " GPUs, rank " << rank;
        EXPECT_EQ(lesson19::taken_row(layout, rank, rank * r), 0);
      }
    }
}

// The first GEMM's tiles wait for the blocks of other ranks' rows they hold: none of their own
// rank's, both blocks a tile straddles, and none past A's last block.
TEST(TensorParallelRows, ATileWaitsForTheOtherRanksBlocksItHolds) {
  // Two ranks, two chunks of 96 rows each: blocks 0-1 this rank's, 2-3 the other's.
  const lesson19::RowsArrival arrival{nullptr, 1, 96, 2, 4};
  const auto waits = [&](int row0, int rows) {
    const lesson19::BlocksToWaitFor wait = lesson19::blocks_to_wait_for(arrival, row0, rows);
    return std::vector<int>{wait.first, wait.last};
  };
  EXPECT_GT(lesson19::blocks_to_wait_for(arrival, 0, 128).first,
            lesson19::blocks_to_wait_for(arrival, 0, 128).last);  // its own rows only
  EXPECT_EQ(waits(128, 128), (std::vector<int>{2, 2}));            // rows 128-255: blocks 1-2
  EXPECT_EQ(waits(256, 128), (std::vector<int>{2, 3}));            // rows 256-383: blocks 2-3
  EXPECT_EQ(waits(384, 128), (std::vector<int>{4, 3}));            // past the last block: none
  // One GPU: every block is its own.
  const lesson19::RowsArrival alone{nullptr, 1, 64, 3, 3};
  for (int row0 = 0; row0 < 192; row0 += 64) {
    const lesson19::BlocksToWaitFor wait = lesson19::blocks_to_wait_for(alone, row0, 128);
    EXPECT_GT(wait.first, wait.last) << row0;
  }
}

// ---- The allowance for the partials' roundings -------------------------------------------------

// x rounded to bf16, to nearest even (inputs here are finite).
float round_to_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  bits = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

TEST(TensorParallelTolerance, RoundingsPerVariant) {
  for (const Variant variant : lesson19::kVariants)
    EXPECT_EQ(lesson19::partial_roundings(variant, 1), 0);
  EXPECT_EQ(lesson19::partial_roundings(Variant::overlapped, 2), 1);
  EXPECT_EQ(lesson19::partial_roundings(Variant::overlapped, 8), 1);
  EXPECT_EQ(lesson19::partial_roundings(Variant::one_shot, 2), 1);
  EXPECT_EQ(lesson19::partial_roundings(Variant::one_shot, 16), 1);
  EXPECT_EQ(lesson19::partial_roundings(Variant::stream_order, 2), 1);
  EXPECT_EQ(lesson19::partial_roundings(Variant::stream_order, 8), 7);
  EXPECT_EQ(lesson19::partial_roundings(Variant::cublas_nccl, 7), 6);
}

TEST(TensorParallelTolerance, WithoutRoundingsItIsTheCoursesRule) {
  for (const double reference : {-3.0, 0.0, 0.25, 100.0})
    EXPECT_DOUBLE_EQ(lesson19::allowed_error_across_ranks(reference, 1.5, 40.0, 0),
                     gemm::allowed_error(reference, 1.5));
  EXPECT_DOUBLE_EQ(lesson19::allowed_error_across_ranks(0.0, 0.0, 8.0, 3), 3 * 8.0 / 128);
}

TEST(TensorParallelTolerance, TwoPartialsThatCancelNeedTheExtraTerm) {
  // P0 = 4 (1 + 2^-8) and P1 = -4 (1 + 3 * 2^-8) are both halfway between two bf16 values and
  // round away from each other: 4 and -4.0625. Their sum, -2^-5, comes out as -2^-4.
  const float p0 = 4.015625f, p1 = -4.046875f;
  const double exact = double(p0) + double(p1);
  const double summed = round_to_bf16(round_to_bf16(p0) + round_to_bf16(p1));
  const double error = std::fabs(summed - exact), rms = 1.0, magnitude = 4.015625 + 4.046875;
  EXPECT_DOUBLE_EQ(error, 1.0 / 32);
  EXPECT_GT(error, gemm::allowed_error(exact, rms));  // the course's rule alone fails it
  EXPECT_LE(error, lesson19::allowed_error_across_ranks(exact, rms, magnitude, 1));
  // A lost partial is no rounding error: it fails with the extra term too.
  const double lost = round_to_bf16(p0);
  EXPECT_GT(std::fabs(lost - exact),
            lesson19::allowed_error_across_ranks(exact, rms, magnitude, 1));
}

TEST(TensorParallelTolerance, RandomPartialsPassWithTheirRoundings) {
  // Partials as the layer's: sums of many products, so close to normal, with rms(Y) = 1. The
  // overlapped variant's sum (fp32, rounded once) and a ring's (rounded after every addition)
  // both stay within their allowance, element by element.
  std::mt19937 generator(19);
  for (const int gpus : {2, 4, 7, 8}) {
    std::normal_distribution<double> partial(0.0, 1.0 / std::sqrt(double(gpus)));
    double worst_slots = 0, worst_ring = 0;
    for (int element = 0; element < 200000; ++element) {
      double exact = 0, magnitude = 0;
      float slots = 0, ring = 0;
      for (int q = 0; q < gpus; ++q) {
        const double p = partial(generator);
        exact += p;
        magnitude += std::fabs(p);
        const float rounded = round_to_bf16(float(p));
        slots += rounded;
        ring = q == 0 ? rounded : round_to_bf16(ring + rounded);
      }
      const double slots_error = std::fabs(double(round_to_bf16(slots)) - exact);
      const double ring_error = std::fabs(double(ring) - exact);
      const int slot_roundings = lesson19::partial_roundings(Variant::overlapped, gpus);
      const int ring_roundings = lesson19::partial_roundings(Variant::stream_order, gpus);
      worst_slots = std::max(worst_slots, slots_error / lesson19::allowed_error_across_ranks(
                                                            exact, 1.0, magnitude, slot_roundings));
      worst_ring = std::max(worst_ring, ring_error / lesson19::allowed_error_across_ranks(
                                                         exact, 1.0, magnitude, ring_roundings));
    }
    EXPECT_LE(worst_slots, 1.0) << gpus << " GPUs";
    EXPECT_LE(worst_ring, 1.0) << gpus << " GPUs";
  }
}

// ---- Timing counts -----------------------------------------------------------------------------

TEST(TensorParallelTiming, EveryRankDerivesTheSameCountsFromTheSlowestLayer) {
  // 1 ms per layer: 0.2 s of timed layers is 200 pairs; 0.3 s of warm-up at 2 ms a pair, 150.
  const gemm::TimingOptions agreed = lesson19::agreed_timing_options(30, 1.0);
  EXPECT_EQ(agreed.pairs, 200);
  EXPECT_EQ(agreed.warmup, 150);
  // What the timer decides from its own measurements must not change them: no warm-up by time,
  // no extra pairs by time, whatever a rank measured.
  EXPECT_EQ(agreed.warmup_seconds, 0.0);
  for (const double measured_ms : {0.01, 1.0, 50.0})
    EXPECT_EQ(gemm::planned_pairs(agreed, 2 * measured_ms, measured_ms), agreed.pairs);
  // A slow layer: the asked-for pairs and the course's minimum warm-up.
  const gemm::TimingOptions slow = lesson19::agreed_timing_options(30, 100.0);
  EXPECT_EQ(slow.pairs, 30);
  EXPECT_EQ(slow.warmup, 5);
}

// ---- The processes -----------------------------------------------------------------------------

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(TensorParallelRanks, RankZeroReachesEveryOtherRank) {
  const auto body = [](int rank, const gemm::RankChannels& channels) {
    char message[16] = "unique id";
    if (rank == 0) {
      channels.send_to_others(message, sizeof(message));
      return gemm::kExitPass;
    }
    char received[16] = {};
    channels.receive_from_rank_zero(received, sizeof(received));
    return std::strcmp(received, message) == 0 ? gemm::kExitPass : gemm::kExitBadUsage;
  };
  EXPECT_EQ(gemm::run_ranks(4, 30, body), gemm::kExitPass);
}

TEST(TensorParallelRanks, AFailedCheckLetsTheOtherRanksFinish) {
  // Rank 1 reports a failed check at once; rank 0 is still working, and is not stopped.
  const int code = gemm::run_ranks(2, 30, [](int rank, const gemm::RankChannels&) {
    if (rank == 1) return gemm::kExitCheckFailed;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return gemm::kExitPass;
  });
  EXPECT_EQ(code, gemm::kExitCheckFailed);
}

TEST(TensorParallelRanks, AFailedRankStopsTheOthersAndIsNamed) {
  const auto start = std::chrono::steady_clock::now();
  testing::internal::CaptureStderr();
  const int code = gemm::run_ranks(3, 60, [](int rank, const gemm::RankChannels&) {
    if (rank == 2) return gemm::kExitCudaError;
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return gemm::kExitPass;
  });
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, gemm::kExitCudaError);
  EXPECT_LT(seconds_since(start), 20.0);
  EXPECT_NE(printed.find("rank 2 exited with code 5 (CUDA or NCCL error); stopped the other "
                         "ranks"),
            std::string::npos)
      << printed;
}

TEST(TensorParallelRanks, ACrashedRankIsNamedWithItsSignal) {
  testing::internal::CaptureStderr();
  const int code = gemm::run_ranks(2, 60, [](int rank, const gemm::RankChannels&) {
    if (rank == 1) std::raise(SIGKILL);
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return gemm::kExitPass;
  });
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, gemm::kExitCudaError);
  EXPECT_NE(printed.find("rank 1 was killed by signal 9"), std::string::npos) << printed;
}

TEST(TensorParallelRanks, AHangingRankIsStoppedAtTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  testing::internal::CaptureStderr();
  const int code = gemm::run_ranks(2, 1, [](int rank, const gemm::RankChannels&) {
    if (rank == 0) return gemm::kExitPass;
    pause();  // waits for a signal that only the parent's kill brings
    return gemm::kExitPass;
  });
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, gemm::kExitCudaError);
  EXPECT_LT(seconds_since(start), 15.0);
  EXPECT_NE(printed.find("rank 1 did not finish within 1 s"), std::string::npos) << printed;
}

TEST(TensorParallelRanks, AChildReportsWhatItFound) {
  struct Found {
    int count;
  };
  const auto found = gemm::run_in_child<Found>([] { return Found{7}; });
  ASSERT_TRUE(found);
  EXPECT_EQ(found->count, 7);
  const auto died = gemm::run_in_child<Found>([]() -> Found {
    std::_Exit(3);
  });
  EXPECT_FALSE(died);
}

}  // namespace
