#pragma once
// NEW in lesson 19: the overlapped variant's copies for every rank count the layer accepts,
// rehearsed. A layer on G GPUs checks only G; a wrong row map can be right for one rank and wrong
// for two. So every check, on any number of GPUs, also replays the copies that each rank of a
// G-rank layer would issue (rows.hpp: pulled_block, pushed_block), for every G that splits d_ff,
// on buffers of one 8-byte word per row that name the row's token (or its rank and row), and reads
// back where every row landed. The lesson replays them on its GPU (rehearsal_on_gpu.hpp: the same
// cudaMemcpyAsync calls as the layer's copies); the host tests and the grader's host check replay
// them in host memory (HostRows, below).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lessons/19_tensor_parallel/plan.hpp"

namespace lesson19 {

struct RehearsalReport {
  std::vector<int> rank_counts;  // the rank counts rehearsed, in order
  std::string first_failure;     // empty: every row of every rank count landed where it belongs
  bool passed() const { return first_failure.empty(); }
};

namespace rehearsal {

inline constexpr uint64_t kPaddingRow = ~uint64_t(0);  // a row of a shard that holds no token
inline constexpr uint8_t kPoisonByte = 0xA5;           // every byte of a buffer before the copies
inline constexpr uint64_t kPoisonWord = 0xA5A5A5A5A5A5A5A5ull;

// Buffers of rows in host memory, with the operations a rehearsal needs (rehearsal_on_gpu.hpp has
// the same on the GPU).
struct HostRows {
  using Buffer = std::vector<uint64_t>;
  Buffer allocate(int64_t rows) { return Buffer(static_cast<size_t>(rows), kPoisonWord); }
  void write(Buffer& buffer, const std::vector<uint64_t>& words) { buffer = words; }
  void poison(Buffer& buffer) { std::fill(buffer.begin(), buffer.end(), kPoisonWord); }
  void copy(Buffer& to, int64_t to_row, const Buffer& from, int64_t from_row, int64_t rows) {
    std::copy_n(from.begin() + from_row, rows, to.begin() + to_row);
  }
  std::vector<uint64_t> read(const Buffer& buffer) { return buffer; }
};

// What is wrong with the layout itself, or nothing: each rank's rows must hold every token, cut
// into whole chunks, and be the fewest that do (rows.hpp).
inline std::optional<std::string> layout_fault(const ShardLayout& layout) {
  const int64_t rows = layout.rows_per_rank();
  const std::string which = std::to_string(layout.tokens) + " tokens in " +
                            std::to_string(layout.chunks) + " chunk(s): rows_per_rank() is " +
                            std::to_string(rows);
  if (rows < 1 || rows % layout.chunks != 0)
    return which + ", not a positive number of whole chunks";
  if (layout.gpus * rows < layout.tokens) return which + ": the ranks' rows cannot hold the tokens";
  if (layout.gpus * (rows - layout.chunks) >= layout.tokens)
    return which + ": one chunk fewer per rank would hold the tokens";
  return std::nullopt;
}

// Whether `block` reads rows inside a source of `source_rows` rows and writes rows inside a
// destination of `destination_rows` rows (a copy outside them would scribble on other memory).
inline bool inside(const RowBlock& block, int64_t source_rows, int64_t destination_rows) {
  return block.rows >= 0 && block.source_row >= 0 && block.destination_row >= 0 &&
         block.source_row + block.rows <= source_rows &&
         block.destination_row + block.rows <= destination_rows;
}

inline std::string describe_block(const char* what, const RowBlock& block, int rank, int other,
                                  int chunk) {
  return std::string(what) + " of rank " + std::to_string(rank) + ", rank " +
         std::to_string(other) + "'s chunk " + std::to_string(chunk) + ": " +
         std::to_string(block.rows) + " rows from row " + std::to_string(block.source_row) +
         " to row " + std::to_string(block.destination_row);
}

inline std::string describe_word(uint64_t word, int gpus) {
  if (word == kPoisonWord) return "nothing (no copy wrote it)";
  if (word == kPaddingRow) return "padding";
  if ((word >> 32) != 0 && (word >> 32) <= uint64_t(gpus))
    return "rank " + std::to_string((word >> 32) - 1) + "'s row " + std::to_string(word & 0xffffffffu);
  return "token " + std::to_string(word);
}

// The gather of a G-rank layer: every rank pulls every rank's chunks into its gathered X, which
// must then hold token i in row i and padding after the tokens. The first failure, or nothing.
template <class Rows>
std::optional<std::string> rehearse_gather(const ShardLayout& layout, Rows& buffers) {
  const int gpus = layout.gpus;
  const int64_t rows = layout.rows_per_rank(), gathered_rows = layout.padded_tokens();
  std::vector<uint64_t> shard_words(static_cast<size_t>(gathered_rows));
  for (int q = 0; q < gpus; ++q)
    for (int64_t j = 0; j < rows; ++j)
      shard_words[size_t(q * rows + j)] = j < layout.tokens_of(q) ? uint64_t(q * rows + j) : kPaddingRow;
  typename Rows::Buffer shards = buffers.allocate(gathered_rows);
  typename Rows::Buffer gathered = buffers.allocate(gathered_rows);
  buffers.write(shards, shard_words);
  for (int rank = 0; rank < gpus; ++rank) {
    buffers.poison(gathered);
    for (int step = 0; step < gpus; ++step) {
      const int source = first_gemm_rank(rank, step, gpus);
      for (int chunk = 0; chunk < layout.chunks; ++chunk) {
        const RowBlock block = pulled_block(layout, chunk, source);
        if (!inside(block, rows, gathered_rows))
          return describe_block("the pull", block, rank, source, chunk) + ", outside the shard (" +
                 std::to_string(rows) + " rows) or the gathered X (" +
                 std::to_string(gathered_rows) + " rows)";
        buffers.copy(gathered, block.destination_row, shards, source * rows + block.source_row,
                     block.rows);
      }
    }
    const std::vector<uint64_t> landed = buffers.read(gathered);
    for (int64_t i = 0; i < gathered_rows; ++i) {
      const uint64_t expected = i < layout.tokens ? uint64_t(i) : kPaddingRow;
      if (landed[size_t(i)] != expected)
        return "the gather of rank " + std::to_string(rank) + ": row " + std::to_string(i) +
               " of the gathered X holds " + describe_word(landed[size_t(i)], gpus) + ", not " +
               describe_word(expected, gpus);
    }
  }
  return std::nullopt;
}

// The scatter of a G-rank layer: every rank pushes every chunk of its P into its slot of the rows'
// owner, whose slot of rank r must then hold, row j, rank r's row q R + j of P. The first failure,
// or nothing.
template <class Rows>
std::optional<std::string> rehearse_scatter(const ShardLayout& layout, Rows& buffers) {
  const int gpus = layout.gpus;
  const int64_t rows = layout.rows_per_rank(), p_rows = layout.padded_tokens();
  // Rank r's row i of P; rank + 1, so that no word is a token number.
  const auto word = [](int rank, int64_t row) { return (uint64_t(rank + 1) << 32) | uint64_t(row); };
  typename Rows::Buffer partials = buffers.allocate(p_rows);
  typename Rows::Buffer slots = buffers.allocate(int64_t(gpus) * gpus * rows);
  for (int rank = 0; rank < gpus; ++rank) {
    std::vector<uint64_t> p(static_cast<size_t>(p_rows));
    for (int64_t i = 0; i < p_rows; ++i) p[size_t(i)] = word(rank, i);
    buffers.write(partials, p);
    for (int step = 0; step < gpus; ++step) {
      const int owner = second_gemm_rank(rank, step, gpus);
      for (int chunk = 0; chunk < layout.chunks; ++chunk) {
        const RowBlock block = pushed_block(layout, chunk, owner);
        if (!inside(block, p_rows, rows))
          return describe_block("the push", block, rank, owner, chunk) + ", outside P (" +
                 std::to_string(p_rows) + " rows) or a slot (" + std::to_string(rows) + " rows)";
        buffers.copy(slots, (int64_t(owner) * gpus + rank) * rows + block.destination_row, partials,
                     block.source_row, block.rows);
      }
    }
  }
  const std::vector<uint64_t> landed = buffers.read(slots);
  for (int owner = 0; owner < gpus; ++owner)
    for (int rank = 0; rank < gpus; ++rank)
      for (int64_t j = 0; j < rows; ++j) {
        const uint64_t got = landed[size_t((int64_t(owner) * gpus + rank) * rows + j)];
        if (got != word(rank, owner * rows + j))
          return "the scatter: row " + std::to_string(j) + " of rank " + std::to_string(rank) +
                 "'s slot on rank " + std::to_string(owner) + " holds " + describe_word(got, gpus) +
                 ", not " + describe_word(word(rank, owner * rows + j), gpus);
      }
  return std::nullopt;
}

}  // namespace rehearsal

// Every rank count from 1 to kMostRanks that splits d_ff, at `tokens` tokens in `chunks` chunks:
// the layout, the gather and the scatter of each, until the first failure, on the buffers that
// `buffers` makes (rehearsal::HostRows, or the GPU's).
template <class Rows>
RehearsalReport rehearse_exchange(int64_t tokens, int chunks, int64_t d_ff, Rows& buffers) {
  RehearsalReport report;
  for (int gpus = 1; gpus <= kMostRanks && report.passed(); ++gpus) {
    if (gpu_count_violation(gpus, d_ff)) continue;
    report.rank_counts.push_back(gpus);
    const ShardLayout layout{tokens, 1, d_ff, gpus, chunks};
    if (auto fault = rehearsal::layout_fault(layout)) report.first_failure = *fault;
    else if (auto fault = rehearsal::rehearse_gather(layout, buffers)) report.first_failure = *fault;
    else if (auto fault = rehearsal::rehearse_scatter(layout, buffers))
      report.first_failure = *fault;
    if (!report.passed())
      report.first_failure = std::to_string(gpus) + " rank(s), " + report.first_failure;
  }
  return report;
}

}  // namespace lesson19
