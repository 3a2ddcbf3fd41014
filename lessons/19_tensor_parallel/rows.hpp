#pragma once
// Lesson 19's exercise: where every row of the layer goes. Plain host code, which every rank runs to
// cut the tokens and to aim its copies; the check of every run rehearses those copies on one GPU
// for every rank count (rehearsal.hpp), and the grader's host check for 1 to 16 ranks.
//
// Graded instruction signature: none

#include <algorithm>
#include <cstdint>

namespace lesson19 {

// ---- How the layer is cut ----------------------------------------------------------------------
//
// For T tokens over G ranks in c chunks:
//
//   R   rows of X (and of Y) that each rank holds: rank r holds rows [r R, (r+1) R), of which the
//       tokens are those below T. The fewest rows that hold every token and cut into c chunks of
//       equal rows.
//   S = R / c   rows of a chunk: the overlapped variant cuts every rank's rows into c
//   F = d_ff / G   columns of H (and rows of W1, columns of W2) that each rank owns
//
// NEW in lesson 19: any token count. When G c does not divide T, each rank's rows are padded to a
// whole number of chunks, so the last ranks hold fewer tokens (or none) and rows of zeros after
// them: with T = 5, G = 2, c = 1, R = 3, rank 0 holds t0 t1 t2 and rank 1 t3 t4 and one row of
// zeros. The padding rows are always the last G R - T rows of the gathered X, every variant
// computes them like any other row (fewer than G c of them), and no check reads them.
struct ShardLayout {
  int64_t tokens = 0;   // T
  int64_t d_model = 0;  // D
  int64_t d_ff = 0;
  int gpus = 1;    // G
  int chunks = 1;  // c

  int64_t rows_per_rank() const {  // R
    // BEGIN EXERCISE(rows_per_rank, returns, host-check=row_mapping): the rows each rank holds:
    //   the fewest that hold all `tokens` over `gpus` ranks and cut into `chunks` equal chunks
    const int64_t per_chunk = (tokens + int64_t(gpus) * chunks - 1) / (int64_t(gpus) * chunks);
    return per_chunk * chunks;
    // END EXERCISE
  }
  int64_t rows_per_chunk() const { return rows_per_rank() / chunks; }  // S
  int64_t padded_tokens() const { return gpus * rows_per_rank(); }     // G R
  int64_t ff_per_rank() const { return d_ff / gpus; }                  // F
  // The tokens among rank `rank`'s rows: its first tokens_of(rank) rows; the rest are padding.
  int64_t tokens_of(int rank) const {
    return std::clamp<int64_t>(tokens - rank * rows_per_rank(), 0, rows_per_rank());
  }
};

// ---- Where the rows go in the overlapped variant -----------------------------------------------
//
// The blocks below are in token order, as NCCL's all-gather leaves the gathered X: rank q's rows
// are rows [q R, (q+1) R), and chunk s of rank q is its rows s S .. (s+1) S. (The overlapped
// variant keeps its X, H and P in the order it takes them, and places each block there with
// taken_row.) Rank r takes the ranks' rows in turn:
//   - the first GEMM starts with its own rows, which need no copy, then takes rank r + 1's,
//     r + 2's, ... (mod G), each as soon as the copy engines have pulled it;
//   - the second GEMM takes the other ranks' rows first, r + 1's to r - 1's, so that each is
//     pushed to its owner while the next is computed, and its own rows last: they stay, written
//     straight into its own receive slot.
// Rank q's receive buffer has one slot of R rows per rank; the slot of rank r holds r's partial
// sums of q's rows, in the order of q's shard. With G = 2, c = 1 (R = 4 rows per rank), token
// rows t0..t7, on rank 0:
//
//   first GEMM:  t0 t1 t2 t3 (its shard)  then  t4 t5 t6 t7 (pulled from rank 1)
//   second GEMM: t4 t5 t6 t7 (pushed to rank 1's slot 0)  then  t0 t1 t2 t3 (its own slot 0)

// The rank whose rows step `step` (0 .. G-1) of the first GEMM takes on rank `rank`: its own first.
inline int first_gemm_rank(int rank, int step, int gpus) { return (rank + step) % gpus; }

// The rank whose rows step `step` (0 .. G-1) of the second GEMM takes on rank `rank`: the next
// rank's first, its own last.
inline int second_gemm_rank(int rank, int step, int gpus) { return (rank + 1 + step) % gpus; }

// NEW in lesson 19: the overlapped variant's own order of the gathered X, H and P (not NCCL's):
// the ranks' rows in the order its first GEMM takes them, its own first (first_gemm_rank), so
// that one launch of that GEMM starts on rows already here (arriving_rows_gemm.cuh). Row `row` of
// the token order (of rank row / R) is row taken_row(...) there; its own rows stay in place, and on
// one rank nothing moves.
inline int64_t taken_row(const ShardLayout& layout, int rank, int64_t row) {
  const int64_t r = layout.rows_per_rank();
  const int64_t step = (row / r - rank + layout.gpus) % layout.gpus;
  return step * r + row % r;
}

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
  // BEGIN EXERCISE(pulled_block, returns, host-check=row_mapping): the rows of the shard that
  //   chunk `chunk` of rank `source_rank` is, and the rows of the gathered X they become
  const int64_t rows = layout.rows_per_chunk();
  return {chunk * rows, source_rank * layout.rows_per_rank() + chunk * rows, rows};
  // END EXERCISE
}

// The scatter: chunk `chunk` of the rows that rank `destination_rank` owns, from this rank's P
// (rows of P) into this rank's slot of the destination's receive buffer (rows of a slot). On this
// rank's own rows it names where the second GEMM writes them in its own slot.
inline RowBlock pushed_block(const ShardLayout& layout, int chunk, int destination_rank) {
  // BEGIN EXERCISE(pushed_block, returns, host-check=row_mapping): the rows of P that chunk
  //   `chunk` of rank `destination_rank`'s rows are, and the rows of a slot they land in
  const int64_t rows = layout.rows_per_chunk();
  return {destination_rank * layout.rows_per_rank() + chunk * rows, chunk * rows, rows};
  // END EXERCISE
}

}  // namespace lesson19
