// The host-side arithmetic of the Hopper building blocks (common/hopper/): setmaxnreg's register
// budget, where a cluster's blocks take their tiles, the Stream-K work items and workspace, and
// the places of a block's clock stamps.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/gemm.hpp"
#include "common/hopper/cluster_tile.hpp"
#include "common/hopper/stream_k_workspace.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/hopper/trace.hpp"
#include "common/hopper/work_item.hpp"
#include "common/schedule/raster.hpp"
#include "common/schedule/stream_k.hpp"
#include "common/shared_memory.hpp"

namespace {

using gemm::hopper::consumer_registers;
using gemm::hopper::registers_at_launch;

// Lessons 10-13: 384 threads alone on an SM, the producer down to 40; lessons 14-15: the producer
// keeps 56 for the Stream-K arithmetic; 256 threads, two blocks to an SM (lesson 09, exercise 3);
// and 256 threads alone on an SM (lesson 16's 64-row tiles).
TEST(HopperBlocks, RegisterBudgetOfEachConfiguration) {
  EXPECT_EQ(registers_at_launch(256, 2), 128);
  EXPECT_EQ(registers_at_launch(384, 1), 168);  // 65536 / 384 = 170.7, rounded down to 8
  EXPECT_EQ(consumer_registers(256, 2, 40), 216);
  EXPECT_EQ(consumer_registers(384, 1, 40), 232);
  EXPECT_EQ(consumer_registers(384, 1, 56), 224);
  // Lesson 16's 64-row tiles: one consumer alone on an SM would get 456, more than a thread holds.
  EXPECT_EQ(consumer_registers(256, 1, 56), gemm::hopper::kMostConsumerRegisters);
  // What the producer gives up is exactly what the consumers take: never more than the block has.
  for (int producer : {24, 40, 56})
    for (int blocks : {1, 2})
      for (int threads : {256, 384}) {
        const int consumers = consumer_registers(threads, blocks, producer);
        EXPECT_EQ(consumers % 8, 0);
        EXPECT_LE(128 * producer + (threads - 128) * consumers,
                  registers_at_launch(threads, blocks) * threads);
      }
}

TEST(HopperBlocks, TileShapeOfTheLessons) {
  using Lesson09 = gemm::hopper::TileShape<128, 128, 4, 1>;
  static_assert(Lesson09::kThreads == 256 && Lesson09::kRowBlocks == 2);
  static_assert(Lesson09::kAccumulators == 128 && Lesson09::kStageBytes == 32 * 1024);
  using Lesson12 = gemm::hopper::TileShape<128, 256, 4, 2, 2>;
  static_assert(Lesson12::kThreads == 384 && Lesson12::kConsumerRows == 64);
  static_assert(Lesson12::kRowBlocks == 1 && Lesson12::kBSliceRows == 128);
  static_assert(Lesson12::kStageBytes == 48 * 1024);
  // The ring of 4 stages of lesson 10 fits in the shared memory a block may use, a fifth does not.
  static_assert(sizeof(gemm::hopper::OperandRing<Lesson12>) == 4 * 48 * 1024);
  using FiveStages = gemm::hopper::TileShape<128, 256, 5, 2, 2>;
  static_assert(sizeof(gemm::hopper::OperandRing<Lesson12>) <= gemm::kMaxSharedBytesPerBlock);
  static_assert(sizeof(gemm::hopper::OperandRing<FiveStages>) > gemm::kMaxSharedBytesPerBlock);
  SUCCEED();
}

// Cluster tile (m, n) is tile rows 2m and 2m + 1 of tile column n: rank r takes row 2m + r.
TEST(HopperBlocks, ClusterTileOrigins) {
  using Tile = gemm::hopper::TileShape<128, 256, 4, 2, 2>;
  const gemm::hopper::TileOrigin rank0 = gemm::hopper::cluster_tile_origin<Tile>({3, 5}, 0);
  const gemm::hopper::TileOrigin rank1 = gemm::hopper::cluster_tile_origin<Tile>({3, 5}, 1);
  EXPECT_EQ(rank0.row0, 6 * 128);
  EXPECT_EQ(rank1.row0, 7 * 128);
  EXPECT_EQ(rank0.col0, 5 * 256);
  EXPECT_EQ(rank1.col0, 5 * 256);
}

TEST(HopperBlocks, OnlyAnItemWithoutSlicesEndsTheWork) {
  EXPECT_TRUE(gemm::hopper::WorkItem{}.is_end());
  EXPECT_FALSE((gemm::hopper::WorkItem{0, 0, 0, 1}.is_end()));
  EXPECT_FALSE((gemm::hopper::WorkItem{0, 0, 63, 64, 1, 2, 5}.is_end()));
}

// Every slice of every block's tile is computed by exactly one work item of one cluster, the
// parts of a tile carry one workspace slot per block, and only a cut tile uses its slot.
TEST(HopperBlocks, StreamKWorkItemsCoverEverySliceOnce) {
  using Tile = gemm::hopper::TileShape<128, 256, 4, 2, 2>;
  using Workspace = gemm::hopper::StreamKWorkspace<Tile>;
  struct Problem {
    int64_t m, n, k, clusters;
  };
  for (const Problem& problem : {Problem{4224, 4224, 4224, 66}, Problem{256, 512, 65536, 66},
                                 Problem{1000, 1000, 1000, 66}, Problem{333, 136, 264, 3}}) {
    const int64_t cluster_rows = gemm::ceil_div<int64_t>(problem.m, 256);
    const int64_t tiles_n = gemm::ceil_div<int64_t>(problem.n, 256);
    const int64_t k_slices = gemm::ceil_div<int64_t>(problem.k, 64);
    const gemm::StreamKPlan plan =
        gemm::plan_stream_k(cluster_rows * tiles_n, problem.clusters, k_slices);
    std::vector<int> covered(size_t(cluster_rows * 2 * tiles_n * k_slices), 0);
    for (int64_t cluster = 0; cluster < plan.workers; ++cluster)
      for (uint32_t rank = 0; rank < 2; ++rank) {
        const gemm::hopper::StreamKWorkItems<Tile> items{plan, cluster, cluster_rows, tiles_n, 8,
                                                         rank};
        for (int64_t i = 0; i < items.count(); ++i) {
          const gemm::hopper::WorkItem item = items.item(i);
          ASSERT_FALSE(item.is_end());
          ASSERT_EQ(item.row0 % 128, 0);
          ASSERT_EQ(item.col0 % 256, 0);
          const int64_t tile_row = item.row0 / 128, tile_column = item.col0 / 256;
          ASSERT_LT(tile_row, cluster_rows * 2);
          ASSERT_LT(tile_column, tiles_n);
          ASSERT_EQ(tile_row % 2, int64_t(rank));
          if (item.units > 1) {
            ASSERT_LT(item.slot, int64_t(plan.sk_tiles) * 2);
            ASSERT_EQ(item.slot % 2, int64_t(rank));
          }
          for (int slice = item.k_begin; slice < item.k_end; ++slice)
            ++covered[size_t((tile_row * tiles_n + tile_column) * k_slices + slice)];
        }
      }
    for (size_t i = 0; i < covered.size(); ++i)
      ASSERT_EQ(covered[i], 1) << problem.m << " x " << problem.n << " x " << problem.k
                               << ": slice " << i % k_slices << " of tile " << i / k_slices;
    EXPECT_EQ(Workspace::bytes(plan),
              Workspace::flag_bytes(plan) +
                  size_t(plan.sk_tiles) * 2 * 128 * 256 * sizeof(float));
  }
}

// The clock trace's table (common/hopper/trace.hpp): every event of a block has its own place in
// the block's row, and the row holds them all.
TEST(HopperBlocks, EveryTraceEventHasItsOwnSlot) {
  using gemm::hopper::ItemEvent;
  using gemm::hopper::ProducerEvent;
  using Slots = gemm::hopper::TraceSlots;
  std::vector<int> slots;
  for (ProducerEvent event :
       {ProducerEvent::started, ProducerEvent::parameters_read,
        ProducerEvent::barriers_initialized, ProducerEvent::cluster_synced, ProducerEvent::set_up,
        ProducerEvent::first_load, ProducerEvent::first_worked_out, ProducerEvent::first_posted,
        ProducerEvent::last_load})
    slots.push_back(Slots::producer(event));
  for (int warpgroup = 0; warpgroup < Slots::kMathWarpgroups; ++warpgroup) {
    for (int item = 0; item < Slots::kTracedItems; ++item)
      for (ItemEvent event : {ItemEvent::received, ItemEvent::first_slice,
                              ItemEvent::mmas_complete, ItemEvent::stored})
        slots.push_back(Slots::item(warpgroup, item, event));
    slots.push_back(Slots::registers_taken(warpgroup));
    slots.push_back(Slots::finished(warpgroup));
  }
  std::vector<int> seen(Slots::kCount, 0);
  for (int slot : slots) {
    ASSERT_GE(slot, 0);
    ASSERT_LT(slot, Slots::kCount);
    ++seen[size_t(slot)];
  }
  for (int slot = 0; slot < Slots::kCount; ++slot) EXPECT_EQ(seen[size_t(slot)], 1) << slot;
}

}  // namespace
