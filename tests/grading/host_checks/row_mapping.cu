// Host check row_mapping: lesson 19's three regions, graded::ShardLayout::rows_per_rank,
// graded::pulled_block and graded::pushed_block, for every rank count the layer takes.
//
// The grader's runs have one GPU, where a row map that is right for one rank can still be wrong
// for two. Every run rehearses the copies of every rank count on its GPU; this check replays the
// same rehearsal (lessons/19_tensor_parallel/rehearsal.hpp) in host memory over more token counts
// and chunk counts than the runs take: each rank's rows the fewest that hold the tokens in whole
// chunks, every token of the gathered X in its row, every row of P in its owner's slot.
//
// The grader compiles it after the submission's rows.hpp and `namespace graded = lesson19;`
// (build.py); it returns 0 when every case passes, 1 otherwise, and prints what it found.
#include <cstdint>
#include <cstdio>

#include "common/mlp/mlp_chain.hpp"
#include "lessons/19_tensor_parallel/rehearsal.hpp"

namespace row_mapping_check {

int run() {
  const int64_t d_ff = gemm::MlpShape{}.d_ff;
  int failures = 0, cases = 0;
  for (const int chunks : {1, 2, 3, 4, 5, 8, 16})
    for (const int64_t tokens : {1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 64, 100, 127, 255, 1000, 4097}) {
      ++cases;
      graded::rehearsal::HostRows buffers;
      const graded::RehearsalReport report = graded::rehearse_exchange(tokens, chunks, d_ff, buffers);
      if (!report.passed() && failures++ < 10)
        std::printf("FAIL %lld tokens in %d chunk(s) per rank: %s\n", (long long)tokens, chunks,
                    report.first_failure.c_str());
    }
  if (failures == 0)
    std::printf("PASS the rows of %d token and chunk counts on 1-16 ranks: each token in its row "
                "of the gathered X, each row of P in its owner's slot\n", cases);
  return failures == 0 ? 0 : 1;
}

}  // namespace row_mapping_check

int main() { return row_mapping_check::run(); }
