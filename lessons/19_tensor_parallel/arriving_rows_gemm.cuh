#pragma once
// NEW in lesson 19: the overlapped layer's first GEMM as one launch over every row of the gathered
// X while the copy engines are still bringing the other ranks' rows in.
//
// Launched rank block by rank block (one launch for this rank's own rows, one for each other
// rank's once its pull has landed), each launch ends in a partly filled wave and reads all of W1_r
// again. One launch instead: the final kernel (common/hopper/gemm_kernel.cuh) with a mainloop
// whose producer thread, before it loads a work item's rows of A, waits until the copy engines
// have landed them. The rows are laid out in the order the GEMM takes them (rows.hpp:
// taken_row): this rank's own first, then rank r + 1's, and so on; the grouped order of the tiles
// (lesson 13) walks bands of one rank's rows where M is the shorter side, so the first tiles of the
// grid are on rows that are already here, and the other ranks' pulls land while it works on them
// (mostly: the README's timelines show where a tile still waits).
//
//   copy stream:  [pull rank r+1's rows][landed[1] = epoch][pull rank r+2's rows][landed[2] = ...]
//   producer of a block whose tile holds rank r+1's rows:  wait until landed[1] holds the epoch,
//                                                          then load as ever
//
// The flags are written by the copy stream itself after each pull (gemm::write_flag_after: no
// kernel, so nothing waits for an SM this GEMM holds), and hold the epoch of the layer that last
// landed the rows, so they never need resetting.

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <stdexcept>

#include <cuda_runtime_api.h>

#include "common/gemm.hpp"
#include "common/hopper/bf16_configurations.hpp"
#include "common/hopper/epilogue_kind.hpp"
#include "common/hopper/epilogue_tma_store.hpp"
#include "common/hopper/gemm_kernel.cuh"
#include "common/hopper/kernel_tile.hpp"
#include "common/hopper/mainloop_bf16.hpp"
#include "common/hopper/tile_scheduler.hpp"
#include "common/lesson.hpp"
#include "common/ptx/fence.hpp"
#include "common/ptx/memory_order.hpp"
#include "common/schedule/machine_costs.hpp"
#include "lessons/19_tensor_parallel/rows_arrival.hpp"

namespace lesson19 {

#if defined(__CUDACC__)
// The producer thread, before the loads of a work item whose tile holds rows [row0, row0 + rows) of
// A: waits until every block of those rows has landed, then orders its TMA loads (the async proxy)
// after the acquire (the generic proxy).
__device__ inline void wait_for_rows(const RowsArrival& arrival, int row0, int rows) {
  const BlocksToWaitFor wait = blocks_to_wait_for(arrival, row0, rows);
  for (int block = wait.first; block <= wait.last; ++block)
    while (int32_t(gemm::ptx::load_acquire_sys(arrival.landed + block) - arrival.epoch) < 0) {
    }
  gemm::ptx::fence_proxy_async_global();
}
#endif

// The final kernel's bf16 mainloop, its producer waiting for an item's rows before loading them.
struct ArrivingRowsMainloop : gemm::hopper::Bf16Mainloop {
  using Base = gemm::hopper::Bf16Mainloop;
  struct Params : Base::Params {
    RowsArrival arrival;  // set by ArrivingRowsConfiguration::launch
  };
  template <class Tile>
  static Params make_params(const gemm::GemmArgs& args) {
    return {Base::make_params<Tile>(args), RowsArrival{}};
  }
#if defined(__CUDACC__)
  template <class Tile, class Pipeline>
  __device__ static void load(Pipeline& pipeline, Ring<Tile>& ring, const Params& params,
                              const gemm::hopper::WorkItem& item, uint32_t rank,
                              gemm::PipelineState<Tile::kStages>& state) {
    wait_for_rows(params.arrival, item.row0, Tile::kBlockM);
    Base::load<Tile>(pipeline, ring, params, item, rank, state);
  }
#endif
};

// One configuration of the first GEMM (its epilogue: the bias and GELU): a 128-row tile
// BlockN wide, clusters of two, cooperative consumers, epilogue subtiles SubtileColumns wide,
// Stream-K for the last wave, as many stages as fit: lesson 17's configurations of the same
// names, with the mainloop above.
template <int BlockN, int SubtileColumns = 64>
struct ArrivingRowsConfiguration {
  using ConsumerKind = gemm::hopper::ConsumerKind;
  static constexpr int64_t kMinIterations = 8;
  template <int Stages>
  using TileOf =
      gemm::hopper::KernelTile<128, BlockN, 2, Stages, ConsumerKind::cooperative, SubtileColumns>;
  template <int Stages>
  using KernelOf = gemm::hopper::Kernel<
      TileOf<Stages>, ArrivingRowsMainloop,
      gemm::taught::TmaStoreEpilogue<TileOf<Stages>, gemm::hopper::FusedEpilogue<true>>,
      gemm::hopper::StreamKScheduler>;
  using Launcher = gemm::hopper::Configured<KernelOf<gemm::hopper::stages_that_fit<KernelOf>()>>;
  using Tile = typename Launcher::Tile;

  static constexpr gemm::KernelShape shape() {
    gemm::KernelShape shape = Launcher::kShape;
    shape.stream_k_min_iterations = kMinIterations;
    return shape;
  }

  // The grouped order's bands (lesson 13) are a rank's rows where M is the shorter side, at most
  // the course's 8 cluster rows: the grid starts on this rank's own rows.
  static void launch(const gemm::GemmArgs& args, const RowsArrival& arrival,
                     const gemm::StreamKPlan& plan, cudaStream_t stream) {
    const int cluster_rows = Tile::kBlockM * Tile::kClusterM;
    const int rank_rows = arrival.block_rows * arrival.local_blocks;
    const int raster_group = std::clamp(rank_rows / cluster_rows, 1, 8);
    auto params = Launcher::params_of(args, plan, raster_group);
    params.mainloop.arrival = arrival;
    Launcher::launch_with(params, stream);
  }
};

// A configuration as lesson 16's table holds it, for the model, without a launch of lesson 16's
// kind: this GEMM's launch needs the rows' arrival (ArrivingRowsGemm::kLaunches).
template <class C>
constexpr gemm::taught::ConfigurationEntry arriving_rows_entry(const char* name) {
  return {{name, C::shape()}, &C::Launcher::workers, nullptr, &C::Launcher::workspace_bytes,
          &C::Launcher::workspace_flag_bytes};
}

// The first GEMM's configurations, and the course's cost model (lesson 16) choosing among them.
class ArrivingRowsGemm {
 public:
  static gemm::LaunchPlan plan(const gemm::GemmProblem& problem) {
    return gemm::taught::plan_among(kEntries, kCount, problem, /*forced=*/-1,
                                    gemm::taught::costs_on_this_gpu());
  }

  // H = gelu(A B^T + bias): `args` carries the bias and GELU, `arrival` where A's rows arrive.
  static void launch(const gemm::GemmArgs& args, const RowsArrival& arrival,
                     const gemm::LaunchPlan& plan, cudaStream_t stream) {
    if (args.epilogue.is_plain() || !gemm::is_gated(args.epilogue.activation))
      throw std::invalid_argument("the arriving-rows GEMM computes the bias and GELU epilogue");
    kLaunches[plan.configuration](args, arrival, plan.schedule, stream);
  }

 private:
  using Wide = ArrivingRowsConfiguration<256>;
  using Middle = ArrivingRowsConfiguration<192>;
  using Narrow = ArrivingRowsConfiguration<128>;
  using Seven = ArrivingRowsConfiguration<224, 32>;  // 7168 = 32 x 224: two ranks' d_ff / 2
  static constexpr gemm::taught::ConfigurationEntry kEntries[] = {
      arriving_rows_entry<Wide>("128x256_c2_sk8"), arriving_rows_entry<Middle>("128x192_c2_sk8"),
      arriving_rows_entry<Narrow>("128x128_c2_sk8"),
      arriving_rows_entry<Seven>("128x224_c2_sk8_s32")};
  static constexpr int kCount = int(std::size(kEntries));
  using Launch = void (*)(const gemm::GemmArgs&, const RowsArrival&, const gemm::StreamKPlan&,
                          cudaStream_t);
  static constexpr Launch kLaunches[] = {&Wide::launch, &Middle::launch, &Narrow::launch,
                                         &Seven::launch};
};

}  // namespace lesson19
