#pragma once
// The configuration table of the final kernel for bf16 operands (lessons 16, 17 and 19): every
// configuration the kernel is compiled in, and the plan of a problem, which the cost model chooses
// (common/schedule/shape_model.hpp) among the schedules that the configurations' launches run.
// Taught in lesson 16: lessons/16_shape_heuristics/kernel.cuh spells it out
// (tests/tools/test_teaching_copies.py keeps the two identical).

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/gemm.hpp"
#include "common/hopper/epilogue_kind.hpp"
#include "common/hopper/epilogue_tma_store.hpp"
#include "common/hopper/gemm_kernel.cuh"
#include "common/hopper/kernel_tile.hpp"
#include "common/hopper/mainloop_bf16.hpp"
#include "common/hopper/tile_scheduler.hpp"
#include "common/hopper/trace.hpp"
#include "common/lesson.hpp"
#include "common/schedule/kernel_shape.hpp"
#include "common/schedule/machine_costs.hpp"
#include "common/schedule/shape_model.hpp"
#include "common/schedule/stream_k.hpp"

namespace gemm::taught {

// BEGIN TEACHING COPY(Bf16Configurations)
// One configuration: the final kernel with a BlockM x BlockN tile, clusters of ClusterM blocks,
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

// The table. Lesson 15's configuration first; then the same tile data-parallel and without
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

}  // namespace gemm::taught
