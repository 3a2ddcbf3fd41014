// Lesson 16 (a supplement past the ladder): a kernel for every shape. A cost model chooses the
// configuration, as cuBLAS does.
//
// Lesson 15's kernel is tuned for large problems: a 128 x 256 tile per block and clusters of two
// blocks. At 1024^3 that is 16 cluster tiles for the 66 clusters an H100 or H200 holds: a quarter
// of the SMs work, and the kernel reaches half of cuBLAS. cuBLAS does not run one kernel: it
// compiles many configurations and picks one per problem. So does this lesson, without writing a
// new kernel: every configuration below is an instantiation of lesson 15's kernel (its tile's rows
// and columns, its cluster size, its stages, and the threshold of its Stream-K plan), and a cost
// model estimates the time each would take from what the hardware does:
//   - the busiest worker's k-iterations: the waves, and how full the last one is;
//   - the time of one k-iteration: the tensor cores' share of the tile, or the bytes the block's
//     own loads read from L2, whichever is longer (a block in a cluster of two receives all of its
//     B slice, but reads only half of it from L2: the other half is its partner's multicast);
//   - a cost per work item (the part of the epilogue and the tile switch that MMAs do not hide)
//     and the Stream-K fixup's partial sums;
//   - the launch, and the DRAM floor: every operand read once and D written once.
// The launch takes the configuration with the smallest estimate. The model is judged by what it
// loses against the best configuration measured on each shape (README).
//
// The lesson compiles no kernel of its own (its configurations are lesson 15's kernel), so the
// grader checks no instructions of it: the host check shape_model tests what a student writes.
// Graded instruction signature: none
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <utility>

#include "common/device_facts.hpp"
#include "common/gemm.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/per_device.hpp"
#include "common/schedule/stream_k.hpp"
#include "common/shared_memory.hpp"
#include "lessons/15_tma_store_epilogue/kernel.cuh"

namespace lesson16 {

// BEGIN TEACHING COPY(shape_model)
// What the cost model knows of a configuration.
struct KernelShape {
  int block_m, block_n;  // the tile of D that one block computes
  int cluster_m;         // blocks per cluster along M: each loads 1 / cluster_m of B (multicast)
  int64_t stream_k_min_iterations;  // the threshold of the configuration's Stream-K plans
};

// The costs of the H100 SXM that the model uses, fitted to the oracle sweep of the standard shapes
// (README; profiles/sweeps/configs_16.csv). On any Hopper GPU the lesson takes the DRAM rate from
// the GPU itself (costs_on_this_gpu), and these for the rest.
struct MachineCosts {
  double macs_per_ns_per_sm;      // bf16 multiply-adds one SM's tensor cores do, at the clock under load
  double l2_bytes_per_ns_per_sm;  // what one SM's TMA loads read from L2 (a multicast: once)
  double dram_bytes_per_ns;       // what the whole GPU reads from and writes to DRAM
  double launch_ns;               // once per launch: the launch, barrier set-up, the first loads
  double item_ns;                 // per work item: the epilogue and tile switch MMAs do not hide
  double stream_k_unit_ns;        // per Stream-K unit: waiting for the tile's other parts
};
inline constexpr MachineCosts kH100Costs{
    .macs_per_ns_per_sm = 2800.0,
    .l2_bytes_per_ns_per_sm = 58.0,
    .dram_bytes_per_ns = 2900.0,
    .launch_ns = 5000.0,
    .item_ns = 0.0,
    .stream_k_unit_ns = 8750.0,
};

// The Stream-K plan (lesson 14) that a configuration makes for a problem on `workers` resident
// clusters: the kernel's own plan (lesson 15's plan_for) for the GPU's count of workers.
inline gemm::StreamKPlan plan_on(const KernelShape& shape, const gemm::GemmProblem& p,
                                 int64_t workers) {
  const int64_t tiles = gemm::ceil_div<int64_t>(p.m, int64_t(shape.block_m) * shape.cluster_m) *
                        gemm::ceil_div<int64_t>(p.n, shape.block_n);
  return gemm::plan_stream_k(tiles, workers, gemm::ceil_div<int64_t>(p.k, gemm::hopper::kBlockK),
                             /*reverse=*/true, shape.stream_k_min_iterations);
}

// The wave term: the k-iterations of the busiest worker, which sets the time, since a launch ends
// when its last worker does. With T whole tiles of K iterations on W workers, that is
// ceil(T / W) * K: the last wave costs as much as a full one however few tiles it holds. A Stream-K
// plan gives every worker its share of the cut tiles (one iteration more for the first `longer`
// workers) before its whole tiles. The wave efficiency of a plan is the work it has,
// T * K, over the work its workers could have done meanwhile, W times this.
inline int64_t busiest_worker_iterations(const gemm::StreamKPlan& plan) {
  // BEGIN EXERCISE(busiest_worker, returns, host-check=shape_model): the k-iterations of the
  //   busiest worker of the plan: its share of the Stream-K tiles, then its whole tiles
  const int64_t stream_k_share =
      plan.sk_tiles == 0 ? 0 : plan.share + (plan.longer > 0 ? 1 : 0);
  return stream_k_share + gemm::data_parallel_count(plan, 0) * plan.k_iterations;
  // END EXERCISE
}

// The time of one k-iteration (a 64-deep slice) of one block. The producer runs ahead of the
// consumers by the ring's stages, so loading the next slices and multiplying this one overlap, and
// the slower of the two sets the pace: the tensor cores' time for the tile's multiply-adds, or the
// time L2 takes to serve the block's own loads of A and B. A block loads all of its A rows but
// only 1 / cluster_m of B: the cluster's multicast brings the rest, which L2 reads once for all
// the blocks of the cluster. So the bytes counted are those L2 reads for the block, not those it
// receives: a 128 x 256 block in a cluster of two receives (128 + 256) x 128 bytes per k-iteration
// and is charged (128 + 128) x 128.
inline double iteration_ns(const KernelShape& shape, const MachineCosts& costs) {
  // BEGIN EXERCISE(iteration_bound, returns, host-check=shape_model): the time of one k-iteration
  //   of a block: its tensor cores' time for the tile's multiply-adds, or the time its bytes of A
  //   and B take from L2, whichever is longer
  const double macs = double(shape.block_m) * shape.block_n * gemm::hopper::kBlockK;
  const double bytes = double(shape.block_m + shape.block_n / shape.cluster_m) *
                       gemm::hopper::kBlockK * sizeof(gemm::bf16);
  const double mma_ns = macs / costs.macs_per_ns_per_sm;
  const double load_ns = bytes / costs.l2_bytes_per_ns_per_sm;
  return mma_ns > load_ns ? mma_ns : load_ns;
  // END EXERCISE
}

// The estimated time of a configuration on a problem. The main loops and the DRAM traffic overlap:
// the slower of the busiest worker's k-iterations and the whole problem's bytes sets the pace.
// What comes after a main loop adds to it: the worker's work items (each ends in an epilogue), its
// Stream-K units (each waits for the tile's other parts) and the partial sums that the part ending
// a cut tile reads. A Stream-K plan that cuts few tiles into many parts pays for them even where
// DRAM bounds the product, as in a decode step.
inline double estimate_ns(const KernelShape& shape, const gemm::GemmProblem& p, int64_t workers,
                          const MachineCosts& costs) {
  const gemm::StreamKPlan plan = plan_on(shape, p, workers);
  const int64_t items = gemm::stream_k_work_count(plan, 0);
  const int64_t stream_k_units = gemm::stream_k_unit_count(plan, 0);
  // A tile cut into parts of about `share` iterations has K / share of them, and the part that
  // finishes it reads the partial sums of all the others: fp32 tiles, through L2.
  const int64_t parts =
      plan.sk_tiles == 0 ? 0 : gemm::ceil_div<int64_t>(plan.k_iterations, plan.share);
  const double partial_bytes = double(parts) * shape.block_m * shape.block_n * sizeof(float);
  const double main_loop_ns = double(busiest_worker_iterations(plan)) * iteration_ns(shape, costs);
  const double dram_bytes = double(p.m * p.k + p.n * p.k + p.m * p.n) * sizeof(gemm::bf16);
  const double dram_ns = dram_bytes / costs.dram_bytes_per_ns;
  const double streaming_ns = main_loop_ns > dram_ns ? main_loop_ns : dram_ns;
  return costs.launch_ns + streaming_ns + double(items) * costs.item_ns +
         double(stream_k_units) * costs.stream_k_unit_ns +
         partial_bytes / costs.l2_bytes_per_ns_per_sm;
}

// The configuration with the smallest estimate (the first of equal ones). workers[i]: the clusters
// of configuration i that the GPU holds at once.
inline int choose_configuration(const KernelShape* shapes, const int64_t* workers, int count,
                                const gemm::GemmProblem& p, const MachineCosts& costs) {
  int best = 0;
  double best_ns = std::numeric_limits<double>::infinity();
  for (int i = 0; i < count; ++i) {
    const double ns = estimate_ns(shapes[i], p, workers[i], costs);
    if (ns < best_ns) {
      best = i;
      best_ns = ns;
    }
  }
  return best;
}
// END TEACHING COPY

// NEW in lesson 16: the tiles. Lesson 15's kernel takes any tile whose shape has the members of
// lesson 15's TileShape: BlockM rows of D (64: one consumer warpgroup; 128: two, each 64 rows),
// BlockN columns (a multiple of the epilogue's 64-column subtiles), clusters of ClusterM blocks
// along M, and Stages slices in the ring.
// BEGIN TEACHING COPY(TileShape)
template <int BlockM, int BlockN, int ClusterM, int Stages>
struct TileShape
    : gemm::hopper::TileShape<BlockM, BlockN, Stages,
                              /*Consumers=*/BlockM / gemm::hopper::kWarpgroupM, ClusterM> {
  static constexpr int kSubtileRows = TileShape::kWarpgroupM, kSubtileColumns = 64;
  static constexpr int kSubtiles = BlockN / kSubtileColumns;
  static constexpr int kEpilogueBuffers = 2;
  static_assert(BlockN % kSubtileColumns == 0, "the epilogue stores whole 64-column subtiles");
};
// END TEACHING COPY

// NEW in lesson 16: the stages a tile gets: as many as fit in a block's shared memory next to the
// epilogue's subtile buffers, the barriers and the work queue, up to kMostStages. A 128 x 256 tile
// gets 4 (lesson 15's), 128 x 128 gets 6, 64 x 128 gets 8: the narrower the tile, the more
// k-slices in flight, which is what keeps a problem with few tiles fed.
constexpr int kMostStages = 8;
template <int BlockM, int BlockN, int ClusterM, int Stages = kMostStages>
constexpr int stages_that_fit() {
  using Storage = lesson15::SharedStorage<TileShape<BlockM, BlockN, ClusterM, Stages>>;
  constexpr size_t bytes = sizeof(Storage) + gemm::kSharedAlignment;
  if constexpr (bytes <= gemm::kMaxSharedBytesPerBlock || Stages == 2)
    return Stages;
  else
    return stages_that_fit<BlockM, BlockN, ClusterM, Stages - 1>();
}

// What that gives (the README's table of the configurations): lesson 15's 4 stages at its own
// tile, 6 at 128 x 128, 8 at 64 x 128.
static_assert(stages_that_fit<128, 256, 2>() == 4 && stages_that_fit<128, 192, 2>() == 4);
static_assert(stages_that_fit<128, 128, 2>() == 6 && stages_that_fit<64, 256, 2>() == 5);
static_assert(stages_that_fit<64, 192, 2>() == 6 && stages_that_fit<64, 128, 2>() == 8);

// NEW in lesson 16: the configurations. Each one is lesson 15's kernel with one of those tiles,
// and Stream-K plans that cut tiles when each worker gets at least MinIterations k-iterations
// (lesson 14's rule is 8; kNever: data-parallel).
constexpr int kNever = std::numeric_limits<int>::max();

// (Launch: the kernel and how it starts; lesson 17 runs its own kernel in the same configurations.)
template <int BlockM, int BlockN, int ClusterM, int MinIterations,
          template <class, class> class Launch = lesson15::StreamOrderLaunch>
struct Config {
  using Tile = TileShape<BlockM, BlockN, ClusterM, stages_that_fit<BlockM, BlockN, ClusterM>()>;
  static constexpr KernelShape kShape{BlockM, BlockN, ClusterM, MinIterations};

  static void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
    lesson15::launch_tile<Tile, /*RasterGroup=*/8, /*Reverse=*/true, MinIterations, Launch>(
        args, stream);
  }
  static size_t workspace_bytes(const gemm::GemmProblem& problem) {
    return lesson15::workspace_bytes_tile<Tile, /*Reverse=*/true, MinIterations>(problem);
  }
  static size_t workspace_flag_bytes(const gemm::GemmProblem& problem) {
    return lesson15::workspace_flag_bytes_tile<Tile, /*Reverse=*/true, MinIterations>(problem);
  }
  static int64_t workers() { return lesson15::resident_workers<Tile>(); }
};

// Name, shape, launch, workspace and workers of one configuration.
struct Entry {
  gemm::Configuration configuration;
  KernelShape shape;
  int64_t (*workers)();
};
template <class C>
constexpr Entry entry(const char* name) {
  return {{name, &C::launch, &C::workspace_bytes, &C::workspace_flag_bytes}, C::kShape,
          &C::workers};
}

// Lesson 15's configuration first; then the same tile data-parallel and without clusters; then
// tiles for problems whose 128 x 256 tiles are fewer than the SMs: 192 and 128 wide, and 64 rows
// high with one consumer, as cuBLAS runs on small and skinny problems; with lesson 14's Stream-K
// rule, or with one that also splits short shares (2 k-iterations per worker).
constexpr int kConfigurationCount = 12;
template <template <class, class> class Launch>
inline constexpr Entry kEntriesOf[kConfigurationCount] = {
    entry<Config<128, 256, 2, 8, Launch>>("128x256_c2_sk8"),
    entry<Config<128, 256, 2, kNever, Launch>>("128x256_c2_dp"),
    entry<Config<128, 256, 1, 8, Launch>>("128x256_c1_sk8"),
    entry<Config<128, 192, 2, 8, Launch>>("128x192_c2_sk8"),
    entry<Config<128, 128, 2, 8, Launch>>("128x128_c2_sk8"),
    entry<Config<128, 128, 2, 2, Launch>>("128x128_c2_sk2"),
    entry<Config<128, 128, 1, 2, Launch>>("128x128_c1_sk2"),
    entry<Config<64, 256, 2, 8, Launch>>("64x256_c2_sk8"),
    entry<Config<64, 192, 2, 8, Launch>>("64x192_c2_sk8"),
    entry<Config<64, 128, 2, 8, Launch>>("64x128_c2_sk8"),
    entry<Config<64, 128, 1, 2, Launch>>("64x128_c1_sk2"),
    entry<Config<64, 64, 1, 2, Launch>>("64x64_c1_sk2"),
};
inline constexpr const auto& kEntries = kEntriesOf<lesson15::StreamOrderLaunch>;

// The registry's view of them (gemm::Lesson::configurations: --config NAME).
template <template <class, class> class Launch, size_t... I>
constexpr auto configuration_table(std::index_sequence<I...>) {
  return std::array<gemm::Configuration, sizeof...(I)>{kEntriesOf<Launch>[I].configuration...};
}
template <template <class, class> class Launch>
inline constexpr auto kConfigurationsOf =
    configuration_table<Launch>(std::make_index_sequence<kConfigurationCount>{});
inline constexpr const auto& kConfigurations = kConfigurationsOf<lesson15::StreamOrderLaunch>;

// NEW in lesson 16: the costs on the GPU at hand. What the SMs and L2 do per clock is the same on
// every Hopper GPU; the memory is not (an H200 reads about 1.4 times as fast as an H100). So the
// DRAM rate comes from the memory clock and bus width that the device reports, times the share of
// that peak a kernel reaches (kDramShareReached: the H100's fitted 2.9 TB/s of its 3.35; a copy on
// the H200 reached 4.275 of its 4.814 TB/s, 0.89, docs/hardware.md), and the fitted costs give the
// rest. Asked once per device.
// BEGIN TEACHING COPY(costs_on_this_gpu)
inline constexpr double kDramShareReached = 0.87;
inline MachineCosts costs_on_this_gpu() {
  static gemm::PerDevice<MachineCosts> costs;
  const int device = gemm::current_device();
  return costs.get(device, [device] {
    const gemm::DeviceFacts facts = gemm::query_device_facts(device);
    MachineCosts here = kH100Costs;
    here.dram_bytes_per_ns = kDramShareReached *
                             gemm::theoretical_dram_bytes_per_second(facts.memory_clock_khz,
                                                                     facts.memory_bus_width_bits) /
                             1e9;
    return here;
  });
}
// END TEACHING COPY

// NEW in lesson 16: the model's choice among the configurations for a problem, given how many
// clusters of each the GPU holds at once.
inline int choose_entry(const gemm::GemmProblem& problem,
                        const int64_t (&workers)[kConfigurationCount],
                        const MachineCosts& costs) {
  KernelShape shapes[kConfigurationCount];
  for (int i = 0; i < kConfigurationCount; ++i) shapes[i] = kEntries[i].shape;
  return choose_configuration(shapes, workers, kConfigurationCount, problem, costs);
}

// The choice on this GPU: its resident clusters of each configuration (asked once per
// configuration and device) and its costs.
inline int chosen_configuration(const gemm::GemmProblem& problem) {
  int64_t workers[kConfigurationCount];
  for (int i = 0; i < kConfigurationCount; ++i) workers[i] = kEntries[i].workers();
  return choose_entry(problem, workers, costs_on_this_gpu());
}

// The chosen configuration, with Launch's kernel (lesson 17 passes its own).
template <template <class, class> class Launch>
void launch_chosen(const gemm::GemmArgs& args, cudaStream_t stream) {
  kEntriesOf<Launch>[chosen_configuration(args.problem)].configuration.launch(args, stream);
}

inline void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch_chosen<lesson15::StreamOrderLaunch>(args, stream);
}

inline size_t workspace_bytes(const gemm::GemmProblem& problem) {
  return kEntries[chosen_configuration(problem)].configuration.workspace_bytes(problem);
}

inline size_t workspace_flag_bytes(const gemm::GemmProblem& problem) {
  return kEntries[chosen_configuration(problem)].configuration.workspace_flag_bytes(problem);
}

inline constexpr gemm::Lesson kLesson{
    .id = 16,
    .parent = 15,
    .slug = "shape_heuristics",
    .title = "a cost model picks one of twelve compiled configurations of lesson 15 per problem",
    .launch = &launch,
    .workspace_bytes = &workspace_bytes,
    .min_arch = gemm::MinArch::sm90a,
    .zeroed_workspace = true,
    .workspace_resets_itself = true,
    .workspace_flag_bytes = &workspace_flag_bytes,
    .fused_epilogue = true,
    .configurations = kConfigurations.data(),
    .configuration_count = kConfigurationCount,
    .chosen_configuration = &chosen_configuration,
};

}  // namespace lesson16
