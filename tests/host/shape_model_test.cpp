// Lesson 16's cost model (common/schedule/shape_model.hpp): the wave term against a count of every
// worker's work, the k-iteration's three bounds (for bf16 and e4m3 slices), the DRAM floor, what
// ping-pong hides, the rule for equal estimates, and the choices it must make, each configuration estimated on the schedule its launch runs
// (gemm::plan_schedule, common/schedule/kernel_shape.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/schedule/kernel_shape.hpp"
#include "common/schedule/shape_model.hpp"

namespace {

using gemm::GemmProblem;
using gemm::StreamKPlan;
using gemm::KernelShape;
using gemm::taught::kH100Costs;

// The most k-iterations any worker has, counted item by item.
int64_t counted_busiest(const StreamKPlan& plan) {
  int64_t most = 0;
  for (int64_t worker = 0; worker < plan.workers; ++worker)
    most = std::max(most, gemm::stream_k_worker_iterations(plan, worker));
  return most;
}

TEST(ShapeModel, BusiestWorkerMatchesACountOfEveryWorker) {
  for (int64_t tiles : {1, 3, 16, 64, 65, 66, 67, 131, 132, 133, 200, 289, 561})
    for (int64_t workers : {1, 7, 66, 132})
      for (int64_t k : {1, 2, 9, 16, 64, 128})
        for (int64_t min_iterations : {int64_t(2), int64_t(8), int64_t(1) << 40}) {
          const StreamKPlan plan = gemm::plan_stream_k(tiles, workers, k, true, min_iterations);
          EXPECT_EQ(gemm::taught::busiest_worker_iterations(plan), counted_busiest(plan))
              << tiles << " tiles, " << workers << " workers, K " << k << ", min " << min_iterations;
        }
}

TEST(ShapeModel, AWaveJustPastFullCostsAWholeWave) {
  // Data-parallel: 132 tiles of 64 iterations on 132 workers are one wave; one tile more is two.
  const int64_t never = int64_t(1) << 40;
  EXPECT_EQ(gemm::taught::busiest_worker_iterations(gemm::plan_stream_k(132, 132, 64, true, never)), 64);
  EXPECT_EQ(gemm::taught::busiest_worker_iterations(gemm::plan_stream_k(133, 132, 64, true, never)), 128);
  // Stream-K shares the 133 tiles' iterations out instead: 64 and a half tile's worth at most.
  const int64_t stream_k = gemm::taught::busiest_worker_iterations(gemm::plan_stream_k(133, 132, 64));
  EXPECT_LE(stream_k, 65);
  EXPECT_GE(stream_k, 64);
}

TEST(ShapeModel, AnIterationIsBoundByTheTensorCoresByL2OrByTheLoadsLatency) {
  const KernelShape wide{128, 256, 2, 8}, alone{128, 256, 1, 8};
  // The largest of the three bounds, and the multicast halves what a block of a pair loads of B.
  gemm::taught::MachineCosts slow_l2 = kH100Costs;
  slow_l2.l2_bytes_per_ns_per_sm = 1.0;
  EXPECT_DOUBLE_EQ(gemm::taught::iteration_ns(wide, slow_l2), (128 + 128) * 64 * 2.0);
  EXPECT_DOUBLE_EQ(gemm::taught::iteration_ns(alone, slow_l2), (128 + 256) * 64 * 2.0);
  // The tensor cores: each wgmma as if wgmma_extra_columns wider.
  gemm::taught::MachineCosts fast_l2 = kH100Costs;
  fast_l2.l2_bytes_per_ns_per_sm = 1e9;
  fast_l2.load_latency_ns = 0;
  const double mma_ns = 128.0 * (256 + kH100Costs.wgmma_extra_columns) * 64 /
                        kH100Costs.macs_per_ns_per_sm;
  EXPECT_DOUBLE_EQ(gemm::taught::iteration_ns(wide, fast_l2), mma_ns);
  EXPECT_DOUBLE_EQ(gemm::taught::tensor_core_ns(wide, kH100Costs), mma_ns);
  // With a fixed cost per wgmma (the fits put it at a column or less), a narrow tile runs below
  // the full rate: a 64-column tile's MMAs take more than a quarter of a 256-column tile's.
  gemm::taught::MachineCosts fixed_cost = kH100Costs;
  fixed_cost.wgmma_extra_columns = 0.8;
  const KernelShape narrow{128, 64, 2, 8};
  EXPECT_GT(gemm::taught::tensor_core_ns(narrow, fixed_cost),
            gemm::taught::tensor_core_ns(wide, fixed_cost) / 4);
  // The latency: a slice's loads take load_latency_ns, and `stages` of them are in flight.
  gemm::taught::MachineCosts slow_loads = fast_l2;
  slow_loads.load_latency_ns = 1e6;
  KernelShape deep = wide;
  deep.stages = 8;
  EXPECT_DOUBLE_EQ(gemm::taught::iteration_ns(wide, slow_loads), 1e6 / 4);
  EXPECT_DOUBLE_EQ(gemm::taught::iteration_ns(deep, slow_loads), 1e6 / 8);
}

// The estimate of a configuration on the schedule its launch runs on `workers` clusters.
double estimate(const KernelShape& shape, const GemmProblem& p, int64_t workers) {
  return gemm::taught::estimate_ns(shape, gemm::plan_schedule(shape, p, workers), p, kH100Costs);
}

// The model's choice among configurations, each on its own schedule.
template <size_t N>
int choose(const KernelShape (&shapes)[N], const int64_t (&workers)[N], const GemmProblem& p) {
  StreamKPlan plans[N];
  for (size_t i = 0; i < N; ++i) plans[i] = gemm::plan_schedule(shapes[i], p, workers[i]);
  return gemm::taught::choose_configuration(shapes, plans, int(N), p, kH100Costs);
}

TEST(ShapeModel, AnE4m3SliceIsTwiceTheValuesInTheSameBytes) {
  // lesson 18's slices: 128 values of one byte, the bytes of a bf16 slice of 64, and twice its
  // multiply-adds (at the tensor cores' doubled rate, in fp8's own costs).
  const KernelShape bf16{128, 128, 2, 8}, e4m3{128, 128, 2, 8, /*slice_k=*/128, /*bytes=*/1};
  gemm::taught::MachineCosts slow_l2 = kH100Costs;
  slow_l2.l2_bytes_per_ns_per_sm = 1.0;
  EXPECT_DOUBLE_EQ(gemm::taught::iteration_ns(e4m3, slow_l2), gemm::taught::iteration_ns(bf16, slow_l2));
  gemm::taught::MachineCosts fp8_fast_l2 = kH100Costs;
  fp8_fast_l2.l2_bytes_per_ns_per_sm = 1e9;
  fp8_fast_l2.load_latency_ns = 0;
  fp8_fast_l2.macs_per_ns_per_sm *= 2;
  EXPECT_DOUBLE_EQ(gemm::taught::iteration_ns(e4m3, fp8_fast_l2),
                   128.0 * (128 + kH100Costs.wgmma_extra_columns) * 128 /
                       fp8_fast_l2.macs_per_ns_per_sm);
  // And its schedule counts slices of 128: half the k-iterations of bf16's.
  const GemmProblem p{4096, 4096, 4096};
  EXPECT_EQ(gemm::plan_schedule(e4m3, p, 66).k_iterations, 32);
  EXPECT_EQ(gemm::plan_schedule(bf16, p, 66).k_iterations, 64);
}

TEST(ShapeModel, NoEstimateBeatsTheDramFloor) {
  const KernelShape shape{128, 128, 1, 8};
  for (const GemmProblem& p : {GemmProblem{8192, 8192, 64}, GemmProblem{64, 65536, 64}}) {
    const double bytes = double(p.m * p.k + p.n * p.k + p.m * p.n) * 2;
    EXPECT_GE(estimate(shape, p, 132), kH100Costs.launch_ns + bytes / kH100Costs.dram_bytes_per_ns);
  }
}

TEST(ShapeModel, StreamKFixupsComeAfterTheDramStream) {
  // 128 x 8192 x 8192, a decode step: both configurations stream B from DRAM for longer than their
  // main loops take. The wide tile cuts its 32 tiles into four parts each, and the part that ends
  // a tile then reads the others' 128 KB partial sums; the narrow tiles are cut into at most two.
  // Those fixups wait for the stream, so they add to it: the narrow tile is cheaper.
  const KernelShape shapes[] = {{128, 256, 1, 8}, {64, 128, 2, 8}};
  const int64_t workers[] = {132, 66};
  const GemmProblem decode{128, 8192, 8192};
  const double dram_ns =
      double(decode.m * decode.k + decode.n * decode.k + decode.m * decode.n) * 2 /
      kH100Costs.dram_bytes_per_ns;
  EXPECT_GT(estimate(shapes[0], decode, workers[0]),
            kH100Costs.launch_ns + dram_ns + kH100Costs.stream_k_unit_ns);
  EXPECT_EQ(choose(shapes, workers, decode), 1);
}

TEST(ShapeModel, SmallProblemsTakeNarrowTilesAndLargeOnesWideTiles) {
  const KernelShape shapes[] = {{128, 256, 2, 8}, {128, 64, 1, 2}};
  const int64_t workers[] = {66, 132};
  // 1024^3: 16 wide cluster tiles keep 32 SMs busy; 128 narrow tiles keep 128.
  EXPECT_EQ(choose(shapes, workers, {1024, 1024, 1024}), 1);
  // 8192^3: both fill the GPU, and the wide tile needs fewer bytes per multiply-add.
  EXPECT_EQ(choose(shapes, workers, {8192, 8192, 8192}), 0);
}

TEST(ShapeModel, PingPongShowsOnlyItsLastEpilogue) {
  // 4096^3 in 128 x 128 tiles on 66 clusters: 8 tiles per worker, data-parallel either way. The
  // cooperative consumers wait for each tile's epilogue; the ping-pong ones for the last one only.
  KernelShape cooperative{128, 128, 2, gemm::kNoStreamK};
  KernelShape pingpong = cooperative;
  pingpong.pingpong = true;
  const GemmProblem p{4096, 4096, 4096};
  const StreamKPlan plan = gemm::plan_schedule(cooperative, p, 66);
  ASSERT_EQ(plan.sk_tiles, 0);
  const int64_t items = gemm::stream_k_work_count(plan, 0);
  const double subtile_ns = kH100Costs.subtile_ns;
  // Cooperative: each warpgroup stores its 64 rows, 2 subtiles, after every one of the items;
  // ping-pong: a warpgroup stores all 128 rows of its tile, 4 subtiles, and only the last shows.
  EXPECT_NEAR(estimate(cooperative, p, 66) - estimate(pingpong, p, 66),
              double(items) * 2 * subtile_ns - 4 * subtile_ns, 1e-6);
}

TEST(ShapeModel, TiedEstimatesPreferTheLargerTileThenAPlanThatCutsNoTile) {
  // 16896 x 256 x 4096 on 128 x 256 tiles in clusters of two is 66 cluster tiles, one full wave
  // of 66 clusters: Stream-K cuts nothing, so the Stream-K and the data-parallel configuration
  // run the same schedule, and the one that can never cut tiles wins, wherever it stands in the
  // table.
  const KernelShape stream_k{128, 256, 2, 8}, data_parallel{128, 256, 2, gemm::kNoStreamK};
  const GemmProblem p{16896, 256, 4096};
  ASSERT_EQ(gemm::plan_schedule(stream_k, p, 66).sk_tiles, 0);
  const KernelShape first_stream_k[] = {stream_k, data_parallel};
  const KernelShape first_data_parallel[] = {data_parallel, stream_k};
  const int64_t workers[] = {66, 66};
  EXPECT_EQ(choose(first_stream_k, workers, p), 1);
  EXPECT_EQ(choose(first_data_parallel, workers, p), 0);
  // The larger tile comes first, even where its plan cuts tiles and the smaller one's does not.
  EXPECT_TRUE(gemm::taught::breaks_tie_before(
      KernelShape{128, 256, 2, 8}, gemm::plan_stream_k(10, 66, 64),
      KernelShape{128, 128, 2, gemm::kNoStreamK},
      gemm::plan_stream_k(20, 66, 64, true, gemm::kNoStreamK)));
}

TEST(ShapeModel, EstimatesWithinTheTieFractionAreATie) {
  // A decode step at the DRAM floor (128 x 4096 x 4096, with everything but DRAM made free): a
  // 64 x 64 tile on its own and 64 x 128 tiles in pairs cut by split-K. Their estimates differ by
  // the soft maximum's trace of the MMAs, far less than the model can resolve; the larger tile
  // wins from either place in the table.
  gemm::taught::MachineCosts dram_bound = kH100Costs;
  dram_bound.dram_bytes_per_ns = 1.0;
  dram_bound.subtile_ns = 0;
  dram_bound.stream_k_unit_ns = 0;
  const GemmProblem p{128, 4096, 4096};
  KernelShape small{64, 64, 1, 2}, large{64, 128, 2, 8};
  large.split_k = true;
  const StreamKPlan small_plan = gemm::plan_schedule(small, p, 132);
  const StreamKPlan large_plan = gemm::plan_schedule(large, p, 66);
  const double small_ns = gemm::taught::estimate_ns(small, small_plan, p, dram_bound);
  const double large_ns = gemm::taught::estimate_ns(large, large_plan, p, dram_bound);
  EXPECT_NE(small_ns, large_ns);
  EXPECT_LT(std::abs(small_ns - large_ns),
            gemm::taught::kTieFraction * std::min(small_ns, large_ns));
  const KernelShape small_first[] = {small, large}, large_first[] = {large, small};
  const StreamKPlan small_first_plans[] = {small_plan, large_plan};
  const StreamKPlan large_first_plans[] = {large_plan, small_plan};
  EXPECT_EQ(gemm::taught::choose_configuration(small_first, small_first_plans, 2, p, dram_bound), 1);
  EXPECT_EQ(gemm::taught::choose_configuration(large_first, large_first_plans, 2, p, dram_bound), 0);
}

}  // namespace
