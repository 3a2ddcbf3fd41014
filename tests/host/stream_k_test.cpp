#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/gemm.hpp"
#include "common/schedule/kernel_shape.hpp"
#include "common/schedule/stream_k.hpp"

namespace {

using gemm::plan_stream_k;
using gemm::StreamKPlan;
using gemm::StreamKWork;

struct Shape {
  int64_t tiles, workers, k_iterations;
};

// Shapes whose plans use Stream-K and shapes whose plans do not; ragged counts included.
const std::vector<Shape> kShapes = {
    {289, 66, 66},  {561, 132, 66}, {16, 66, 256},  {4, 66, 128},  {67, 66, 64},
    {1, 66, 1024},  {70, 66, 9},    {133, 66, 13},  {132, 66, 64}, {200, 66, 1},
    {65, 66, 64},   {7, 3, 100},    {10, 4, 17},    {3, 132, 8},   {1000, 132, 40},
};

// Every k-iteration of every tile, and how many work items covered it.
void expect_every_iteration_once(const StreamKPlan& plan) {
  std::vector<int> covered(size_t(plan.tiles * plan.k_iterations), 0);
  for (int64_t worker = 0; worker < plan.workers; ++worker)
    for (int64_t item = 0; item < gemm::stream_k_work_count(plan, worker); ++item) {
      const StreamKWork work = gemm::stream_k_work(plan, worker, item);
      ASSERT_GE(work.tile, 0);
      ASSERT_LT(work.tile, plan.tiles);
      ASSERT_GE(work.k_begin, 0);
      ASSERT_LT(work.k_begin, work.k_end) << "an empty unit";
      ASSERT_LE(work.k_end, plan.k_iterations);
      for (int64_t k = work.k_begin; k < work.k_end; ++k)
        ++covered[size_t(work.tile * plan.k_iterations + k)];
    }
  for (size_t i = 0; i < covered.size(); ++i)
    ASSERT_EQ(covered[i], 1) << "tile " << i / plan.k_iterations << " k " << i % plan.k_iterations;
}

}  // namespace

TEST(StreamK, EveryIterationOfEveryTileExactlyOnce) {
  for (const Shape& shape : kShapes)
    for (bool reverse : {true, false}) {
      SCOPED_TRACE(::testing::Message() << shape.tiles << " tiles, " << shape.workers
                                        << " workers, K " << shape.k_iterations);
      expect_every_iteration_once(
          plan_stream_k(shape.tiles, shape.workers, shape.k_iterations, reverse));
    }
}

TEST(StreamK, TheStreamKSharesAreBalancedToWithinOneIteration) {
  for (const Shape& shape : kShapes) {
    const StreamKPlan plan = plan_stream_k(shape.tiles, shape.workers, shape.k_iterations);
    if (plan.sk_tiles == 0) continue;
    int64_t shortest = INT64_MAX, longest = 0, total = 0;
    for (int64_t worker = 0; worker < plan.workers; ++worker) {
      const int64_t length = gemm::stream_k_end(plan, worker) - gemm::stream_k_begin(plan, worker);
      shortest = std::min(shortest, length);
      longest = std::max(longest, length);
      total += length;
    }
    EXPECT_LE(longest - shortest, 1) << shape.tiles << " tiles";
    EXPECT_EQ(total, plan.sk_tiles * plan.k_iterations);
    EXPECT_GE(shortest, gemm::kStreamKMinIterations);
  }
}

TEST(StreamK, EachTileHasExactlyOneFinalUnitAndUnitsNumberedInKOrder) {
  for (const Shape& shape : kShapes) {
    const StreamKPlan plan = plan_stream_k(shape.tiles, shape.workers, shape.k_iterations);
    std::vector<int> finals(size_t(plan.tiles), 0);
    std::vector<std::vector<StreamKWork>> units(size_t(plan.tiles));
    for (int64_t worker = 0; worker < plan.workers; ++worker)
      for (int64_t item = 0; item < gemm::stream_k_work_count(plan, worker); ++item) {
        const StreamKWork work = gemm::stream_k_work(plan, worker, item);
        finals[size_t(work.tile)] += work.is_final();
        units[size_t(work.tile)].push_back(work);
      }
    for (int64_t tile = 0; tile < plan.tiles; ++tile) {
      EXPECT_EQ(finals[size_t(tile)], 1) << "tile " << tile;
      const auto& parts = units[size_t(tile)];
      for (const StreamKWork& work : parts) {
        EXPECT_EQ(work.units, int64_t(parts.size())) << "tile " << tile;
        // Unit u starts where the units before it end: their k-ranges are in unit order.
        int64_t before = 0;
        for (const StreamKWork& other : parts) before += other.k_end <= work.k_begin;
        EXPECT_EQ(work.unit, before) << "tile " << tile;
        // The final unit holds the tile's last k-iteration; the first its first.
        EXPECT_EQ(work.is_final(), work.k_end == plan.k_iterations);
        EXPECT_EQ(work.is_first(), work.k_begin == 0);
      }
    }
  }
}

TEST(StreamK, DataParallelWhereStreamKDoesNotPay) {
  // Whole waves.
  EXPECT_EQ(plan_stream_k(132, 66, 64).sk_tiles, 0);
  // A last wave at least 80% full (53 of 66 workers busy).
  EXPECT_EQ(plan_stream_k(66 + 53, 66, 64).sk_tiles, 0);
  EXPECT_GT(plan_stream_k(66 + 52, 66, 64).sk_tiles, 0);
  // K too short to split: 1 and 4 k-iterations per tile.
  EXPECT_EQ(plan_stream_k(200, 66, 1).sk_tiles, 0);
  EXPECT_EQ(plan_stream_k(67, 66, 4).sk_tiles, 0);
  // Fewer tiles than workers with a short K: only as many workers as tiles.
  EXPECT_EQ(plan_stream_k(3, 66, 2).sk_tiles, 0);
  EXPECT_EQ(plan_stream_k(3, 66, 2).workers, 3);
  // ... but with a long K every worker shares the few tiles.
  EXPECT_EQ(plan_stream_k(16, 66, 256).sk_tiles, 16);
  EXPECT_EQ(plan_stream_k(16, 66, 256).workers, 66);
}

TEST(StreamK, DataParallelPlanIsThePersistentScheduleUnchanged) {
  const StreamKPlan plan = plan_stream_k(132, 66, 64);
  ASSERT_EQ(plan.sk_tiles, 0);
  for (int64_t worker = 0; worker < 66; ++worker) {
    ASSERT_EQ(gemm::stream_k_work_count(plan, worker), 2);
    for (int64_t item = 0; item < 2; ++item) {
      const StreamKWork work = gemm::stream_k_work(plan, worker, item);
      EXPECT_EQ(work.tile, worker + item * 66);  // tile = iteration x grid + worker
      EXPECT_EQ(work.k_begin, 0);
      EXPECT_EQ(work.k_end, 64);
      EXPECT_TRUE(work.is_first());
      EXPECT_TRUE(work.is_final());
    }
  }
}

TEST(StreamK, TheWaveQuantizedExampleOfTheLesson) {
  // 4224^3: 17 x 17 cluster tiles of 2 x (128 x 256), 66 k-iterations each, 66 clusters.
  const StreamKPlan plan = plan_stream_k(289, 66, 66);
  EXPECT_EQ(plan.sk_tiles, 25 + 66);  // the tail plus one full wave
  EXPECT_EQ(plan.share, 91);          // 91 x 66 iterations over 66 workers
  EXPECT_EQ(plan.longer, 0);
  // Every worker: its Stream-K units and 3 data-parallel tiles, 91 + 3 x 66 iterations.
  for (int64_t worker = 0; worker < 66; ++worker) EXPECT_EQ(gemm::data_parallel_count(plan, worker), 3);
}

TEST(StreamK, ReverseOrderDoesTheFinalUnitLast) {
  const StreamKPlan plan = plan_stream_k(289, 66, 66, /*reverse=*/true);
  for (int64_t worker = 1; worker < 66; ++worker) {
    const int64_t units = gemm::stream_k_unit_count(plan, worker);
    ASSERT_GE(units, 2);
    // Worker w > 0 starts inside a tile begun by worker w - 1: that unit, which must wait, is
    // its last Stream-K item; its first item starts a tile.
    EXPECT_FALSE(gemm::stream_k_work(plan, worker, units - 1).is_first());
    EXPECT_TRUE(gemm::stream_k_work(plan, worker, 0).is_first());
  }
}

TEST(StreamK, TheWorkersIterationsAddUpToEveryTilesK) {
  for (const Shape& shape : kShapes) {
    const StreamKPlan plan = plan_stream_k(shape.tiles, shape.workers, shape.k_iterations);
    int64_t total = 0;
    for (int64_t worker = 0; worker < plan.workers; ++worker)
      total += gemm::stream_k_worker_iterations(plan, worker);
    EXPECT_EQ(total, shape.tiles * shape.k_iterations)
        << shape.tiles << " tiles, " << shape.workers << " workers, K " << shape.k_iterations;
  }
}

// Split-K (lesson 16): a Stream-K plan whose share divides a tile, one unit per worker.
TEST(SplitK, EveryTileInEqualPartsOnePerWorker) {
  struct Case {
    int64_t tiles, workers, k_iterations, parts;  // parts 1: data-parallel
  };
  const std::vector<Case> cases = {
      {32, 66, 256, 2},   // 1024 x 1024 x 16384 in 256 x 128 cluster tiles
      {16, 66, 256, 4},   // ... in 256 x 256 cluster tiles
      {64, 132, 64, 2},   // a decode row, 64 x 64 tiles without clusters
      {4, 66, 96, 12},    // 12 divides 96; 13 to 16 parts would be shorter than 8 iterations
      {5, 66, 97, 1},     // a prime K: no equal parts
      {3, 66, 15, 1},     // parts of 8 do not fit in 15
      {66, 66, 256, 1},   // a whole wave of tiles: nothing to split
      {40, 66, 1024, 1},  // two parts per tile need 80 workers
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.tiles << " tiles, " << c.workers << " workers, K "
                                      << c.k_iterations);
    const StreamKPlan plan = gemm::plan_split_k(c.tiles, c.workers, c.k_iterations);
    expect_every_iteration_once(plan);
    if (c.parts == 1) {
      EXPECT_EQ(plan.sk_tiles, 0);
      EXPECT_EQ(plan.workers, std::min(c.tiles, c.workers));
      continue;
    }
    EXPECT_EQ(plan.workers, c.tiles * c.parts);
    EXPECT_LE(plan.workers, c.workers);
    for (int64_t worker = 0; worker < plan.workers; ++worker) {
      ASSERT_EQ(gemm::stream_k_work_count(plan, worker), 1);
      const StreamKWork work = gemm::stream_k_work(plan, worker, 0);
      EXPECT_EQ(work.units, c.parts);
      EXPECT_EQ(work.k_end - work.k_begin, c.k_iterations / c.parts);
      EXPECT_GE(work.k_end - work.k_begin, gemm::kStreamKMinIterations);
    }
  }
}

TEST(SplitK, AConfigurationAsksForItsOwnSchedule) {
  gemm::KernelShape shape{128, 128, 2, gemm::kStreamKMinIterations};
  const gemm::GemmProblem problem{1024, 1024, 16384};
  const StreamKPlan stream_k = gemm::plan_schedule(shape, problem, 66);
  shape.split_k = true;
  const StreamKPlan split_k = gemm::plan_schedule(shape, problem, 66);
  // Stream-K shares 32 tiles of 256 iterations among 66 workers (124 each: tiles in 3 parts);
  // split-K cuts each tile in two, on 64 workers.
  EXPECT_EQ(stream_k.share, 124);
  EXPECT_EQ(split_k.share, 128);
  EXPECT_EQ(split_k.workers, 64);
}
