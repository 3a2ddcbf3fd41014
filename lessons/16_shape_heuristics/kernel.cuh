// Lesson 16 (a supplement past the ladder): a kernel for every shape. A cost model chooses the
// configuration, as cuBLAS does.
//
// Lesson 15's kernel is tuned for large problems: a 128 x 256 tile per block and clusters of two
// blocks. At 1024^3 that is 16 cluster tiles for the 66 clusters an H100 or H200 holds: a quarter
// of the SMs work, and the kernel reaches half of cuBLAS. cuBLAS does not run one kernel: it
// compiles many configurations and picks one per problem. So does this lesson, without writing a
// new kernel: every configuration below is the final kernel of lesson 15 with other pieces (its
// tile's rows and columns, its cluster size, its consumers, its epilogue's subtiles, its stages,
// and the threshold of its Stream-K plan), and a cost model estimates the time each would take,
// on the very schedule its launch would run, from what the hardware does:
//   - the busiest worker's k-iterations: the waves, and how full the last one is;
//   - the time of one k-iteration: the tensor cores' share of the tile, or the bytes the block's
//     own loads read from L2 (a block in a cluster of two receives all of its B slice, but reads
//     only half of it from L2: the other half is its partner's multicast);
//   - a cost per work item (the part of the epilogue and the tile switch that MMAs do not hide)
//     and the Stream-K fixup's partial sums;
//   - the launch, and the DRAM floor: every operand read once and D written once.
// The plan takes the configuration with the smallest estimate, once per problem; the workspace,
// the launch and the report all take that one plan. The model is judged by what it loses against
// the best configuration measured on each shape (README).
//
// The lesson's code is the host's: the grader checks no instructions of it, and the host check
// shape_model tests what a student writes.
// Graded instruction signature: none
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/device_facts.hpp"
#include "common/gemm.hpp"
#include "common/hopper/epilogue_kind.hpp"
#include "common/hopper/epilogue_tma_store.hpp"
#include "common/hopper/gemm_kernel.cuh"
#include "common/hopper/kernel_tile.hpp"
#include "common/hopper/mainloop_bf16.hpp"
#include "common/hopper/tile_scheduler.hpp"
#include "common/hopper/trace.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/per_device.hpp"
#include "common/schedule/kernel_shape.hpp"
#include "common/schedule/stream_k.hpp"

namespace lesson16 {

using gemm::taught::TmaStoreEpilogue;  // lesson 15's epilogue

// BEGIN TEACHING COPY(shape_model)
// The costs that the model uses, fitted per GPU to its oracle sweep (every configuration timed on
// the standard sweep and the workload set: README; profiles/sweeps/configs_16*.csv;
// `shape_model_report --fit`), for bf16 operands. On any Hopper GPU the lesson takes the costs of
// the GPU whose memory is nearest its own, and the DRAM rate from the GPU itself
// (costs_on_this_gpu).
struct MachineCosts {
  double macs_per_ns_per_sm;      // multiply-adds one SM's tensor cores do, at the clock under load
  double wgmma_extra_columns;     // a wgmma N columns wide takes as long as N + this many would
  double l2_bytes_per_ns_per_sm;  // what one SM's TMA loads read from L2 (a multicast: once)
  double load_latency_ns;         // a slice's loads, from issue to arrival (stages of them in flight)
  double dram_bytes_per_ns;       // what the whole GPU reads from and writes to DRAM
  double overlap_power;           // how the main loops and DRAM overlap: the soft maximum's power
  double launch_ns;               // once per launch: the launch, barrier set-up, the first loads
  double subtile_ns;              // per epilogue subtile: what the MMAs do not hide
  double stream_k_unit_ns;        // per Stream-K unit and fixup step: waiting for other parts
  double last_wave_speedup;       // a last wave of few whole tiles: its tensor cores up to 1 + this
                                  // times faster (the clock rises while few SMs work)
  int sms;                        // the SMs whose clusters the workers are
};
inline constexpr MachineCosts kH100Costs{
    .macs_per_ns_per_sm = 3094.0,
    .wgmma_extra_columns = 0.0,
    .l2_bytes_per_ns_per_sm = 77.7,
    .load_latency_ns = 1745.0,
    .dram_bytes_per_ns = 2916.0,
    .overlap_power = 4.0,
    .launch_ns = 7802.0,
    .subtile_ns = 251.7,
    .stream_k_unit_ns = 2528.0,
    .last_wave_speedup = 0.67,
    .sms = 132,
};
// The H200 SXM's, fitted to its own oracle (profiles/sweeps/configs_16_h200.csv): the H100's die
// with a faster memory, which under the same 700 W cap runs its tensor cores at a lower clock.
inline constexpr MachineCosts kH200Costs{
    .macs_per_ns_per_sm = 2979.0,
    .wgmma_extra_columns = 0.0,
    .l2_bytes_per_ns_per_sm = 113.7,
    .load_latency_ns = 1725.0,
    .dram_bytes_per_ns = 4188.0,
    .overlap_power = 4.0,
    .launch_ns = 7508.0,
    .subtile_ns = 145.0,
    .stream_k_unit_ns = 2345.0,
    .last_wave_speedup = 0.45,
    .sms = 132,
};

// The wave term: the k-iterations of the busiest worker, which sets the time, since a launch ends
// when its last worker does (the README's cost model; gemm::StreamKPlan says what each worker
// gets). The wave efficiency of a plan is the work it has, T whole tiles of K iterations, T * K,
// over the work its W workers could have done meanwhile, W times this.
inline int64_t busiest_worker_iterations(const gemm::StreamKPlan& plan) {
  // BEGIN EXERCISE(busiest_worker, returns, host-check=shape_model): the k-iterations of the
  //   busiest worker of the plan
  const int64_t stream_k_share =
      plan.sk_tiles == 0 ? 0 : plan.share + (plan.longer > 0 ? 1 : 0);
  return stream_k_share + gemm::data_parallel_count(plan, 0) * plan.k_iterations;
  // END EXERCISE
}

// The tensor cores' time for one k-iteration of a block's tile. Each wgmma pays a fixed cost to
// issue and to drain besides its columns' work, as if it were wgmma_extra_columns wider: a narrow
// tile runs below the tensor cores' full rate. (The fits put it at 1 column or less: once the
// loads' contention for L2 is counted, below, a narrow tile's loss is in its loads.)
inline double tensor_core_ns(const gemm::KernelShape& shape, const MachineCosts& costs) {
  return double(shape.block_m) * (shape.block_n + costs.wgmma_extra_columns) * shape.slice_k /
         costs.macs_per_ns_per_sm;
}

// The time one block's loads of a k-iteration take from L2 (a multicast: read once, by one block of
// the cluster, so each block reads 1 / cluster_m of B).
inline double l2_load_ns(const gemm::KernelShape& shape, const MachineCosts& costs) {
  const double bytes =
      double(shape.block_m + shape.block_n / shape.cluster_m) * shape.slice_k * shape.operand_bytes;
  return bytes / costs.l2_bytes_per_ns_per_sm;
}

// The time of one k-iteration (a slice of slice_k values of K, a 128-byte row of each operand) of
// one block, as the README's cost model counts it: what overlaps, what L2 serves the block
// (l2_load_ns), and what a ring of few stages waits for.
inline double iteration_ns(const gemm::KernelShape& shape, const MachineCosts& costs) {
  // BEGIN EXERCISE(iteration_bound, returns, host-check=shape_model): the time of one k-iteration
  //   of a block
  const double mma_ns = tensor_core_ns(shape, costs);
  const double load_ns = l2_load_ns(shape, costs);
  const double slowest = mma_ns > load_ns ? mma_ns : load_ns;
  const double latency_ns = costs.load_latency_ns / shape.stages;
  return slowest > latency_ns ? slowest : latency_ns;
  // END EXERCISE
}

// The estimated time of a configuration on a problem, running the schedule `plan` (its launch's
// own: gemm::plan_schedule).
//   - The main loops, the blocks' loads from L2 and the DRAM traffic overlap: the busiest worker's
//     k-iterations, its loads and the whole problem's bytes stream at once. Not perfectly: where
//     two take about as long, each waits for the other now and then. So they meet in a soft
//     maximum, (main^p + l2^p + dram^p)^(1/p) with p the overlap power: the longest where they
//     differ, up to 2^(1/p) times it where two are equal. (A block's loads may take less time than
//     its MMAs and still slow them: a tile without a cluster reads all of B's slice itself, and at
//     128 x 256 that costs the H100 17% at 4224^3, where the plain maximum saw nothing.)
//   - What comes after a main loop adds to it: the epilogue's subtiles that no MMA hides, the
//     worker's Stream-K units (each waits for the tile's other parts), the fixup's steps (a tile's
//     parts add their sums one after the other: a tile in n parts takes n - 1 steps after the last
//     part's MMAs, which is why split-K's two equal parts beat Stream-K's three with a sliver) and
//     the partial sums that the part ending a cut tile reads. Cooperative consumers end every work item with their epilogue,
//     all warpgroups at once, each storing its 64 rows; ping-pong consumers store a tile while the
//     other warpgroup runs its MMAs, so only the last tile's epilogue shows.
// A Stream-K plan that cuts few tiles into many parts pays for them even where DRAM bounds the
// product, as in a decode step.
inline double estimate_ns(const gemm::KernelShape& shape, const gemm::StreamKPlan& plan,
                          const gemm::GemmProblem& p, const MachineCosts& costs) {
  const int64_t items = gemm::stream_k_work_count(plan, 0);
  const int64_t stream_k_units = gemm::stream_k_unit_count(plan, 0);
  // A tile cut into parts of about `share` iterations has K / share of them, and the part that
  // finishes it reads the partial sums of all the others: fp32 tiles, through L2.
  const int64_t parts =
      plan.sk_tiles == 0 ? 0 : gemm::ceil_div<int64_t>(plan.k_iterations, plan.share);
  const double partial_bytes = double(parts) * shape.block_m * shape.block_n * sizeof(float);
  const int64_t fixup_steps = parts > 0 ? parts - 1 : 0;
  const double busiest_iterations = double(busiest_worker_iterations(plan));
  // The whole tiles' last wave: where it holds few tiles, few SMs work, the clock rises and its
  // tensor cores run faster, by up to 1 + last_wave_speedup when it holds almost none.
  const int64_t gpu_workers = costs.sms >= shape.cluster_m ? costs.sms / shape.cluster_m : 1;
  const int64_t whole_tiles = plan.tiles - plan.sk_tiles;
  const int64_t last_wave_tiles = whole_tiles == 0 ? 0 : (whole_tiles - 1) % gpu_workers + 1;
  MachineCosts last_wave_costs = costs;
  last_wave_costs.macs_per_ns_per_sm *=
      1.0 + costs.last_wave_speedup * (1.0 - double(last_wave_tiles) / double(gpu_workers));
  const double last_wave_iterations = whole_tiles == 0 ? 0.0 : double(plan.k_iterations);
  const double main_loop_ns =
      (busiest_iterations - last_wave_iterations) * iteration_ns(shape, costs) +
      last_wave_iterations * iteration_ns(shape, last_wave_costs);
  const double l2_ns = busiest_iterations * l2_load_ns(shape, costs);
  const double dram_bytes = double(p.m * p.k + p.n * p.k) * shape.operand_bytes +
                            double(p.m * p.n) * sizeof(gemm::bf16);
  const double dram_ns = dram_bytes / costs.dram_bytes_per_ns;
  const double streaming_ns = std::pow(std::pow(main_loop_ns, costs.overlap_power) +
                                           std::pow(l2_ns, costs.overlap_power) +
                                           std::pow(dram_ns, costs.overlap_power),
                                       1.0 / costs.overlap_power);
  const int64_t exposed_items = shape.pingpong ? (items > 0 ? 1 : 0) : items;
  const int subtiles_per_warpgroup =
      (shape.pingpong ? shape.block_m / 64 : 1) * (shape.block_n / shape.subtile_columns);
  return costs.launch_ns + streaming_ns +
         double(exposed_items * subtiles_per_warpgroup) * costs.subtile_ns +
         double(stream_k_units + fixup_steps) * costs.stream_k_unit_ns +
         partial_bytes / costs.l2_bytes_per_ns_per_sm;
}

// Of two configurations whose estimates tie, the better one: the larger tile (fewer bytes loaded
// per multiply-add, which the model weighs least where DRAM bounds both), then the one whose plan
// cuts no tile (no fixups, no workspace, and a launch that need not wait for every cluster to be
// resident), then the one whose scheduler never cuts tiles (its producer keeps fewer registers);
// the table's order only between configurations that differ in nothing the model sees.
inline bool breaks_tie_before(const gemm::KernelShape& a, const gemm::StreamKPlan& a_plan,
                              const gemm::KernelShape& b, const gemm::StreamKPlan& b_plan) {
  if (a.block_m * a.block_n != b.block_m * b.block_n)
    return a.block_m * a.block_n > b.block_m * b.block_n;
  if ((a_plan.sk_tiles == 0) != (b_plan.sk_tiles == 0)) return a_plan.sk_tiles == 0;
  const bool a_never_cuts = a.stream_k_min_iterations == gemm::kNoStreamK;
  const bool b_never_cuts = b.stream_k_min_iterations == gemm::kNoStreamK;
  return a_never_cuts && !b_never_cuts;
}

// Estimates this close are a tie: the model's residuals against the oracle are a few percent, so
// where its estimates differ by less than this (three configurations at the DRAM floor of a decode
// step, say) the difference is noise, and a stated rule chooses better than the noise.
inline constexpr double kTieFraction = 0.001;

// The configuration with the smallest estimate; of those within kTieFraction of it, the first by
// breaks_tie_before: shapes[i] runs plans[i].
inline int choose_configuration(const gemm::KernelShape* shapes, const gemm::StreamKPlan* plans,
                                int count, const gemm::GemmProblem& p, const MachineCosts& costs) {
  std::vector<double> estimates(count);
  double lowest_ns = std::numeric_limits<double>::infinity();
  for (int i = 0; i < count; ++i) {
    estimates[i] = estimate_ns(shapes[i], plans[i], p, costs);
    lowest_ns = std::min(lowest_ns, estimates[i]);
  }
  int best = -1;
  for (int i = 0; i < count; ++i) {
    if (estimates[i] > lowest_ns * (1.0 + kTieFraction)) continue;
    if (best < 0 || breaks_tie_before(shapes[i], plans[i], shapes[best], plans[best])) best = i;
  }
  return best;
}
// END TEACHING COPY

// NEW in lesson 16: the costs on the GPU at hand. The H100 and the H200 are one die with two
// memories (the H200 reads about 1.4 times as fast), and at the same power cap their clocks under
// load differ too: each has costs fitted to its own oracle. The DRAM rate comes from the memory
// clock and bus width that the device reports, times the share of that peak a kernel reaches
// (kDramShareReached: the H100's fitted 2.9 TB/s of its 3.35; a copy on the H200 reached 4.275 of
// its 4.814 TB/s, 0.89, docs/hardware.md); the other costs are those of the GPU whose DRAM rate is
// nearest. Asked once per device.
// BEGIN TEACHING COPY(costs_on_this_gpu)
inline constexpr double kDramShareReached = 0.87;
inline MachineCosts costs_on_this_gpu() {
  static gemm::PerDevice<MachineCosts> costs;
  const int device = gemm::current_device();
  return costs.get(device, [device] {
    const gemm::DeviceFacts facts = gemm::query_device_facts(device);
    const double dram_bytes_per_ns = kDramShareReached *
                                     gemm::theoretical_dram_bytes_per_second(
                                         facts.memory_clock_khz, facts.memory_bus_width_bits) /
                                     1e9;
    const bool nearer_h200 = std::abs(dram_bytes_per_ns - kH200Costs.dram_bytes_per_ns) <
                             std::abs(dram_bytes_per_ns - kH100Costs.dram_bytes_per_ns);
    MachineCosts here = nearer_h200 ? kH200Costs : kH100Costs;
    here.dram_bytes_per_ns = dram_bytes_per_ns;
    here.sms = facts.sm_count;
    return here;
  });
}
// END TEACHING COPY

// BEGIN TEACHING COPY(Bf16Configurations)
// NEW in lesson 16: one configuration: the final kernel with a BlockM x BlockN tile, clusters of ClusterM blocks,
// the consumers and epilogue subtiles given, as many stages as fit in shared memory next to
// everything else (gemm::hopper::stages_that_fit), and Stream-K plans that cut tiles when each
// worker gets at least MinIterations k-iterations (gemm::kNoStreamK: never, and then the
// data-parallel scheduler, whose producer needs fewer registers). Launch: how it follows the
// kernel ahead in the stream (lesson 17 passes its own). SplitK: its plans cut every tile into
// equal parts of at least MinIterations instead (gemm::plan_split_k), which the split-K scheduler
// works through with less arithmetic before the first load than Stream-K's. Trace: what its roles
// record of their time (nothing; profiles/role_timeline.cu passes the clock's).
template <int BlockM, int BlockN, int ClusterM, gemm::hopper::ConsumerKind Consumers,
          int SubtileColumns, int64_t MinIterations, class Launch, bool SplitK = false,
          class Trace = gemm::hopper::NoTrace>
struct Bf16Configuration {
  using Scheduler = std::conditional_t<
      SplitK, gemm::hopper::SplitKScheduler,
      std::conditional_t<MinIterations == gemm::kNoStreamK, gemm::hopper::DataParallelScheduler,
                         gemm::hopper::StreamKScheduler>>;
  template <int Stages>
  using TileOf =
      gemm::hopper::KernelTile<BlockM, BlockN, ClusterM, Stages, Consumers, SubtileColumns>;
  template <int Stages>
  using PlainKernelOf =
      gemm::hopper::Kernel<TileOf<Stages>, gemm::hopper::Bf16Mainloop,
                           TmaStoreEpilogue<TileOf<Stages>, gemm::hopper::PlainEpilogue>,
                           Scheduler, Launch, Trace>;
  using Tile = TileOf<gemm::hopper::stages_that_fit<PlainKernelOf>()>;
  template <class Kind>
  using KernelOf =
      gemm::hopper::Kernel<Tile, gemm::hopper::Bf16Mainloop, TmaStoreEpilogue<Tile, Kind>,
                           Scheduler, Launch, Trace>;
  using Plain = gemm::hopper::Configured<KernelOf<gemm::hopper::PlainEpilogue>>;
  static_assert(!Tile::kPingPong || MinIterations == gemm::kNoStreamK,
                "ping-pong consumers run data-parallel schedules");
  static_assert(!SplitK || MinIterations != gemm::kNoStreamK,
                "split-K cuts tiles: its threshold is the least k-iterations of a part");

  static constexpr gemm::KernelShape shape() {
    gemm::KernelShape shape = Plain::kShape;
    shape.stream_k_min_iterations = MinIterations;
    shape.split_k = SplitK;
    return shape;
  }
  static void launch(const gemm::GemmArgs& args, const gemm::StreamKPlan& schedule,
                     cudaStream_t stream) {
    gemm::hopper::launch_for_epilogue<KernelOf>(args, schedule, stream);
  }
};

// A configuration as a table holds it: its name and shape, and its host functions.
struct ConfigurationEntry {
  gemm::Configuration configuration;
  int64_t (*workers)();  // the clusters of it that the GPU holds at once
  void (*launch)(const gemm::GemmArgs& args, const gemm::StreamKPlan& schedule,
                 cudaStream_t stream);
  size_t (*workspace_bytes)(const gemm::StreamKPlan& schedule);
  size_t (*workspace_flag_bytes)(const gemm::StreamKPlan& schedule);
};
template <class C>
constexpr ConfigurationEntry configuration_entry(const char* name) {
  return {{name, C::shape()}, &C::Plain::workers, &C::launch, &C::Plain::workspace_bytes,
          &C::Plain::workspace_flag_bytes};
}

// The plan of a problem among a table's configurations: the configuration `forced`, or the one with
// the smallest estimate, each estimated on the very schedule its launch would run on this GPU;
// and that schedule's workspace.
inline gemm::LaunchPlan plan_among(const ConfigurationEntry* entries, int count,
                                   const gemm::GemmProblem& problem, int forced,
                                   const MachineCosts& costs) {
  std::vector<int> candidates;
  std::vector<gemm::KernelShape> shapes;
  std::vector<gemm::StreamKPlan> schedules;
  for (int i = 0; i < count; ++i) {
    if (forced >= 0 && i != forced) continue;
    candidates.push_back(i);
    shapes.push_back(entries[i].configuration.shape);
    schedules.push_back(gemm::plan_schedule(shapes.back(), problem, entries[i].workers()));
  }
  const int best = choose_configuration(shapes.data(), schedules.data(), int(candidates.size()),
                                        problem, costs);
  const int chosen = candidates[best];
  const ConfigurationEntry& entry = entries[chosen];
  return {chosen, schedules[best], entry.workspace_bytes(schedules[best]),
          entry.workspace_flag_bytes(schedules[best])};
}

// NEW in lesson 16: the table. Lesson 15's configuration first; then the same tile data-parallel and without
// clusters; then tiles for problems whose 128 x 256 tiles are fewer than the SMs: 192 and 128
// wide, and 64 rows high with one consumer, as cuBLAS runs on small and skinny problems; with
// lesson 14's Stream-K rule, or with one that also splits short shares (2 k-iterations per
// worker). Then ping-pong consumers (lesson 11), and tiles whose epilogue stores 32-column
// subtiles: half the shared memory of 64-column ones, which buys a fifth stage at 128 x 192 and
// makes tiles 160 and 224 wide possible (224: one wave of 112 tiles at 1792^3, where 256 leaves 98
// and 192 needs 140). Last, split-K on tiles that Stream-K also runs: for few tiles
// with a long K, every tile in equal parts, one per worker (split-K's scheduler: one item per
// worker, found in a few instructions, for the decode rows, whose kernels are short).
// The model weighs them all: what ping-pong hides (the epilogue) and what a fifth stage buys (the
// loads' latency over more slices in flight) are in its costs. (Each configuration is three
// kernels to compile. Three more were measured and left out: 128 x 128 without a cluster, with
// ping-pong consumers or Stream-K's short shares, and 128 x 256 split-K; without them the best
// configuration of the H200's oracle sweep changes on one shape of 85, by 0.4%, and the H100's on
// none.)
template <class Launch, class Trace = gemm::hopper::NoTrace>
struct Bf16Configurations {
  using ConsumerKind = gemm::hopper::ConsumerKind;
  static constexpr ConsumerKind kCooperative = ConsumerKind::cooperative;
  static constexpr ConsumerKind kPingPong = ConsumerKind::pingpong;
  static constexpr int64_t kNever = gemm::kNoStreamK;
  template <int M, int N, int ClusterM, ConsumerKind Consumers, int Subtile, int64_t MinIterations,
            bool SplitK = false>
  using C =
      Bf16Configuration<M, N, ClusterM, Consumers, Subtile, MinIterations, Launch, SplitK, Trace>;
  static constexpr bool kSplitK = true;

  static constexpr ConfigurationEntry kEntries[] = {
      configuration_entry<C<128, 256, 2, kCooperative, 64, 8>>("128x256_c2_sk8"),
      configuration_entry<C<128, 256, 2, kCooperative, 64, kNever>>("128x256_c2_dp"),
      configuration_entry<C<128, 256, 1, kCooperative, 64, 8>>("128x256_c1_sk8"),
      configuration_entry<C<128, 192, 2, kCooperative, 64, 8>>("128x192_c2_sk8"),
      configuration_entry<C<128, 128, 2, kCooperative, 64, 8>>("128x128_c2_sk8"),
      configuration_entry<C<128, 128, 2, kCooperative, 64, 2>>("128x128_c2_sk2"),
      configuration_entry<C<64, 256, 2, kCooperative, 64, 8>>("64x256_c2_sk8"),
      configuration_entry<C<64, 192, 2, kCooperative, 64, 8>>("64x192_c2_sk8"),
      configuration_entry<C<64, 128, 2, kCooperative, 64, 8>>("64x128_c2_sk8"),
      configuration_entry<C<64, 128, 1, kCooperative, 64, 2>>("64x128_c1_sk2"),
      configuration_entry<C<64, 64, 1, kCooperative, 64, 2>>("64x64_c1_sk2"),
      configuration_entry<C<128, 128, 2, kPingPong, 64, kNever>>("128x128_c2_pp"),
      configuration_entry<C<64, 256, 2, kPingPong, 64, kNever>>("64x256_c2_pp"),
      configuration_entry<C<128, 192, 2, kCooperative, 32, 8>>("128x192_c2_sk8_s32"),
      configuration_entry<C<128, 160, 2, kCooperative, 32, 8>>("128x160_c2_sk8_s32"),
      configuration_entry<C<128, 224, 2, kCooperative, 32, 8>>("128x224_c2_sk8_s32"),
      configuration_entry<C<128, 128, 2, kCooperative, 64, 8, kSplitK>>("128x128_c2_split8"),
      configuration_entry<C<64, 128, 2, kCooperative, 64, 8, kSplitK>>("64x128_c2_split8"),
      configuration_entry<C<64, 64, 1, kCooperative, 64, 8, kSplitK>>("64x64_c1_split8"),
  };
  static constexpr int kCount = int(sizeof(kEntries) / sizeof(kEntries[0]));

  // The registry's view of them (gemm::Lesson::configurations: --config NAME).
  template <size_t... I>
  static constexpr std::array<gemm::Configuration, kCount> configurations(
      std::index_sequence<I...>) {
    return {kEntries[I].configuration...};
  }
  static constexpr std::array<gemm::Configuration, kCount> kConfigurations =
      configurations(std::make_index_sequence<kCount>{});
  // Whether the kernels wait for the kernel ahead (gemm::Lesson::waits_for_prerequisite).
  static constexpr bool kWaitsForPrerequisite = Launch::kAfterPrerequisite;

  static gemm::LaunchPlan plan(const gemm::GemmProblem& problem, int forced) {
    return plan_among(kEntries, kCount, problem, forced, costs_on_this_gpu());
  }

  static void launch(const gemm::GemmArgs& args, const gemm::LaunchPlan& plan,
                     cudaStream_t stream) {
    kEntries[plan.configuration].launch(args, plan.schedule, stream);
  }
};
// END TEACHING COPY

// The table in stream order, as lesson 15 runs.
using Configurations = Bf16Configurations<gemm::hopper::StreamOrder>;

// NEW in lesson 16: the stages a tile gets (the README's table of the configurations): lesson 15's
// 4 at its own tile, 6 at 128 x 128, 8 at 64 x 128; the narrower the tile, the more k-slices in
// flight, which is what keeps a problem with few tiles fed. 32-column subtiles give 128 x 192 a
// fifth.
template <int M, int N, gemm::hopper::ConsumerKind Consumers, int Subtile = 64>
constexpr int kStagesOf =
    Bf16Configuration<M, N, 2, Consumers, Subtile, 8, gemm::hopper::StreamOrder>::Tile::kStages;
constexpr auto kCooperative = gemm::hopper::ConsumerKind::cooperative;
static_assert(kStagesOf<128, 256, kCooperative> == 4 && kStagesOf<128, 192, kCooperative> == 4);
static_assert(kStagesOf<128, 128, kCooperative> == 6 && kStagesOf<64, 256, kCooperative> == 5);
static_assert(kStagesOf<64, 192, kCooperative> == 6 && kStagesOf<64, 128, kCooperative> == 8);
static_assert(kStagesOf<128, 192, kCooperative, 32> == 5 && kStagesOf<128, 160, kCooperative, 32> == 5);

inline constexpr gemm::Lesson kLesson = gemm::hopper::final_kernel_lesson<Configurations>();

}  // namespace lesson16
