// Lesson 16's split-K scheduler (common/hopper/tile_scheduler.hpp): on a split-K plan its work
// items are Stream-K's, found with less arithmetic, and it runs no other plan.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "common/gemm.hpp"
#include "common/hopper/tile_scheduler.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/schedule/stream_k.hpp"

namespace {

using gemm::StreamKPlan;
using gemm::hopper::SplitKScheduler;
using gemm::hopper::WorkItem;

void expect_same_item(const WorkItem& split, const WorkItem& stream_k) {
  EXPECT_EQ(split.row0, stream_k.row0);
  EXPECT_EQ(split.col0, stream_k.col0);
  EXPECT_EQ(split.k_begin, stream_k.k_begin);
  EXPECT_EQ(split.k_end, stream_k.k_end);
  EXPECT_EQ(split.unit, stream_k.unit);
  EXPECT_EQ(split.units, stream_k.units);
  EXPECT_EQ(split.slot, stream_k.slot);
}

// Every worker's items, on split plans of tiles from 1 to a few waves' worth, K from the least a
// split needs to a deep one, clusters of one and two blocks, and the plans that split nothing.
template <class Tile>
void expect_stream_k_items(int64_t tiles_m, int64_t tiles_n, int64_t k_iterations,
                           int64_t workers) {
  const StreamKPlan plan = gemm::plan_split_k(tiles_m * tiles_n, workers, k_iterations);
  ASSERT_TRUE(SplitKScheduler::can_run(plan));
  for (int64_t cluster = 0; cluster < plan.workers; ++cluster)
    for (uint32_t rank = 0; rank < uint32_t(Tile::kClusterM); ++rank) {
      const gemm::hopper::StreamKWorkItems<Tile> stream_k{plan, cluster, tiles_m, tiles_n, 8,
                                                          rank};
      const gemm::hopper::SplitKWorkItems<Tile> split{stream_k};
      ASSERT_EQ(split.count(), stream_k.count());
      for (int64_t i = 0; i < split.count(); ++i) {
        SCOPED_TRACE(testing::Message() << tiles_m << " x " << tiles_n << " tiles, K "
                                        << k_iterations << ", worker " << cluster << ", item "
                                        << i);
        expect_same_item(split.item(i), stream_k.item(i));
      }
    }
}

TEST(SplitKWorkItems, AreStreamKsForTheSamePlan) {
  using Single = gemm::hopper::TileShape<64, 64, 8, 1, 1>;
  using Pair = gemm::hopper::TileShape<128, 128, 6, 2, 2>;
  for (const int64_t k_iterations : {16, 64, 72, 256, 1000})
    for (const int64_t workers : {132, 66, 7})
      for (const auto& [tiles_m, tiles_n] :
           {std::pair<int64_t, int64_t>{1, 1}, {1, 64}, {1, 96}, {2, 16}, {4, 8}, {3, 5},
            {16, 16}}) {
        expect_stream_k_items<Single>(tiles_m, tiles_n, k_iterations, workers);
        expect_stream_k_items<Pair>(tiles_m, tiles_n, k_iterations, workers);
      }
}

TEST(SplitKScheduler, RunsSplitPlansAndDataParallelOnesOnly) {
  // 32 tiles of 256 iterations on 66 workers: split-K cuts each in two; Stream-K shares them in
  // 124s, three parts to a tile, which the split-K scheduler refuses.
  const StreamKPlan split = gemm::plan_split_k(32, 66, 256);
  ASSERT_GT(split.sk_tiles, 0);
  EXPECT_TRUE(SplitKScheduler::can_run(split));
  EXPECT_TRUE(SplitKScheduler::can_run(gemm::plan_data_parallel(32, 66, 256)));
  const StreamKPlan stream_k = gemm::plan_stream_k(32, 66, 256);
  ASSERT_GT(stream_k.sk_tiles, 0);
  EXPECT_FALSE(SplitKScheduler::can_run(stream_k));
  EXPECT_FALSE(gemm::hopper::DataParallelScheduler::can_run(split));
  EXPECT_TRUE(gemm::hopper::StreamKScheduler::can_run(stream_k));
}

}  // namespace
