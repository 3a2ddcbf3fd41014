#pragma once
/// The course's final kernel (lessons 15-19), composed of the pieces that the lessons teach, as
/// CUTLASS composes its sm90 kernels:
///
///   Tile        the block's tile, cluster, stages, consumers and epilogue subtiles
///               (common/hopper/kernel_tile.hpp)
///   Mainloop    the producer's loads and the math warpgroups' MMAs over a work item's k-range:
///               bf16 (common/hopper/mainloop_bf16.hpp) or lesson 18's e4m3 with block scales
///   Epilogue    what becomes of a finished tile: lesson 15's TMA-store epilogue, plain or fused
///   Scheduler   which work items each cluster of the persistent grid computes, and how the parts
///               of a cut tile meet (common/hopper/tile_scheduler.hpp): whole tiles (lesson 13),
///               Stream-K (lesson 14) or split-K (lesson 16)
///   Launch      how the launch follows the kernel ahead (common/hopper/launch_policy.hpp): in
///               stream order, or lesson 17's dependent launch
///   Trace       what the roles record of their time (common/hopper/trace.hpp): nothing, or the
///               global timer at each step, for profiles/role_timeline.cu
/// and, chosen at run time, the schedule that the scheduler works through: a Stream-K plan, which
/// is data-parallel when it cuts no tile, in the grouped order of lesson 13.
///
/// The kernel body below names the roles and calls the pieces. A block is one producer warpgroup
/// and Tile::kMathWarpgroups math warpgroups:
///   - thread 0 sets up every barrier; a cluster barrier makes them visible to both blocks;
///   - the producer warpgroup gives registers back (setmaxnreg, lesson 09); its thread 0 posts each
///     work item to the math warpgroups and the epilogue, and loads the item's slices (lessons
///     12-14); its thread 32 is the epilogue's loader (C and the bias, lesson 15);
///   - the math warpgroups take the registers, then run the consumers of their kind
///     (common/hopper/consumers.hpp): MMAs, the scheduler's fixup, the epilogue.
/// The host side (Configured) sizes the persistent grid from the GPU, makes the schedule and
/// launches; a lesson's configurations are Configured kernels.

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>

#include "common/gemm.hpp"
#include "common/hopper/cluster_pipeline.hpp"
#include "common/hopper/consumers.hpp"
#include "common/hopper/epilogue_kind.hpp"
#include "common/hopper/kernel_tile.hpp"
#include "common/hopper/launch_policy.hpp"
#include "common/hopper/producer_tail.hpp"
#include "common/hopper/tile_scheduler.hpp"
#include "common/hopper/tile_shape.hpp"
#include "common/hopper/trace.hpp"
#include "common/hopper/work_queue.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/cluster.hpp"
#include "common/ptx/setmaxnreg.hpp"
#include "common/schedule/kernel_shape.hpp"
#include "common/schedule/pipeline_state.hpp"
#include "common/schedule/stream_k.hpp"
#include "common/shared_memory.hpp"

namespace gemm::hopper {

/// One kernel: the pieces, the shared memory they share and the parameters of a launch.
template <class Tile_, class Mainloop_, class Epilogue_, class Scheduler_ = StreamKScheduler,
          class Launch_ = StreamOrder, class Trace_ = NoTrace>
struct Kernel {
  using Tile = Tile_;
  using Mainloop = Mainloop_;
  using Epilogue = Epilogue_;
  using Scheduler = Scheduler_;
  using Launch = Launch_;
  using Trace = Trace_;
  using Pipeline = taught::ClusterTmaPipeline<Tile::kStages, Tile::kClusterM>;

  // The producer keeps its scheduler's registers; the math warpgroups take the rest
  // (consumer_registers, lesson 10). The work items the producer may run ahead of the math
  // warpgroups (lesson 13).
  static constexpr int kProducerRegisters = Scheduler::kProducerRegisters;
  static constexpr int kWorkQueueDepth = 2;
  static constexpr int kConsumerRegisters =
      consumer_registers(Tile::kThreads, /*blocks_per_sm=*/1, kProducerRegisters);

  // The operand ring and the epilogue's subtile buffers first (1024-byte aligned, whole KB each),
  // then the barriers, the queues and the bias slices, which fit in what the alignment of the
  // storage leaves.
  struct SharedStorage {
    typename Mainloop::template Ring<Tile> ring;
    alignas(1024) typename Epilogue::Buffers epilogue_buffers;
    Pipeline pipeline;                          // of a cluster (lesson 12)
    WorkQueue<kWorkQueueDepth> queue;           // lesson 13
    ConsumerTurns turns;                        // ping-pong's ordered barrier (lesson 11)
    typename Epilogue::SharedStorage epilogue;  // the epilogue loader's (lesson 15)
  };
  static constexpr int kSharedBytes = int(sizeof(SharedStorage) + kSharedAlignment);

  struct Params {
    typename Mainloop::Params mainloop;
    typename Epilogue::Params epilogue;
    Schedule schedule;
    // Where the parts of a cut tile meet: the scheduler's (nothing for whole tiles).
    typename Scheduler::template Workspace<Tile> workspace;
  };
};

#if defined(__CUDACC__)
/// The kernel. One block of a cluster of Tile::kClusterM; cluster c of the persistent grid is
/// worker c of the schedule.
template <class K>
__global__ void __launch_bounds__(K::Tile::kThreads, 1)
    gemm_kernel(const __grid_constant__ typename K::Params params) {
  using Tile = typename K::Tile;
  using Mainloop = typename K::Mainloop;
  using Epilogue = typename K::Epilogue;
  extern __shared__ unsigned char shared_memory[];
  auto& shared = aligned_shared_storage<typename K::SharedStorage>(shared_memory);

  const int warpgroup = threadIdx.x / 128;

  // Thread 0 sets up the barriers (lessons 09-15): the queue's are released by every math warp,
  // a stage by the warps of the warpgroups that share its tile. The cluster barrier makes them
  // visible to both blocks (the pipeline's init fences them for the async proxy).
  if (threadIdx.x == 0) {
    K::Trace::producer(ProducerEvent::started);
    K::Trace::parameters_read(params.schedule);
    Mainloop::prefetch(params.mainloop);
    shared.queue.init(/*consumer_warps=*/Tile::kMathWarpgroups * 4);
    if constexpr (Tile::kPingPong) shared.turns.init();
    Epilogue::init(shared.epilogue, params.epilogue);
    shared.pipeline.init(/*consumer_warps=*/Tile::kConsumers * 4);
    K::Trace::producer(ProducerEvent::barriers_initialized);
  }
  ptx::cluster_sync();

  if (warpgroup == 0) {
    // ---- Producer warpgroup: registers down; one thread posts every work item and loads it. ----
    if (threadIdx.x == 0) K::Trace::producer(ProducerEvent::cluster_synced);
    ptx::setmaxnreg_dec<K::kProducerRegisters>();
    if (threadIdx.x == 0) {
      K::Trace::producer(ProducerEvent::set_up);
      // Cluster c of the persistent grid is worker c of the schedule; both blocks of a cluster
      // walk the same work items, each its own tile row of every cluster tile.
      const uint32_t rank = ptx::cluster_cta_rank();
      const auto schedule = K::Scheduler::template work_items<Tile>(params.schedule,
                                                                    ptx::cluster_id_x(), rank);
      K::Launch::before_first_load();
      K::Trace::producer(ProducerEvent::first_load);
      auto write_state = PipelineState<Tile::kStages>::producer_start();
      for (int64_t i = 0; i < schedule.count(); ++i) {
        const WorkItem item = schedule.item(i);
        if (i == 0) K::Trace::producer(ProducerEvent::first_worked_out);
        // To the math warpgroups and the epilogue alike: the two queues move in step, and their
        // states follow from the position (the producer has no register to spare for another).
        shared.queue.post_at(i, item);
        Epilogue::post(shared.epilogue, i, item);
        if (i == 0) K::Trace::producer(ProducerEvent::first_posted);
        Mainloop::template load<Tile>(shared.pipeline, shared.ring, params.mainloop, item, rank,
                                      write_state);
      }
      K::Launch::after_last_load();
      K::Trace::producer(ProducerEvent::last_load);
      shared.queue.post_at(schedule.count(), WorkItem{});  // no slices: the end of the work
      Epilogue::post(shared.epilogue, schedule.count(), WorkItem{});
      taught::producer_tail(shared.pipeline, write_state);  // lesson 12: before this block exits
    } else if (threadIdx.x == Epilogue::Loader::kThread) {
      Epilogue::load_inputs(shared.epilogue, shared.epilogue_buffers, params.epilogue);
    }
    return;
  }

  // ---- Math warpgroups: registers up; the consumers of the tile's kind. ----
  ptx::setmaxnreg_inc<K::kConsumerRegisters>();
  K::Trace::registers_taken(warpgroup - 1);
  if constexpr (Tile::kPingPong)
    run_pingpong_consumer<K>(shared, params, warpgroup - 1);
  else
    run_cooperative_consumer<K>(shared, params, warpgroup - 1);
}
#endif

/// The host side of a kernel: the persistent grid's size on this GPU, the schedule of a problem
/// and the launch, with `shape` what the cost model knows of it (common/schedule/kernel_shape.hpp).
template <class K>
struct Configured {
  using Tile = typename K::Tile;
  using Workspace = typename K::Scheduler::template Workspace<Tile>;
  static_assert(K::kSharedBytes <= int(kMaxSharedBytesPerBlock),
                "the tile's stages and buffers do not fit in a block's shared memory");
  static constexpr KernelShape kShape{Tile::kBlockM,
                                      Tile::kBlockN,
                                      Tile::kClusterM,
                                      kNoStreamK,
                                      K::Mainloop::kSliceK,
                                      K::Mainloop::kOperandBytes,
                                      Tile::kPingPong,
                                      Tile::kStages,
                                      Tile::kSubtileColumns};

  // How many clusters fit on the GPU at once: the persistent grid's workers. Every kind of
  // epilogue has the same threads and shared memory, so the same clusters fit.
  static int64_t workers() {
    allow_dynamic_shared_memory<gemm_kernel<K>>(K::kSharedBytes);
    return resident_clusters<gemm_kernel<K>>(Tile::kClusterM, Tile::kThreads, K::kSharedBytes);
  }

  // The schedule of a problem with Stream-K's threshold `min_iterations` (kNoStreamK:
  // data-parallel, the only schedule of a data-parallel scheduler).
  static StreamKPlan schedule(const GemmProblem& problem, int64_t min_iterations) {
    KernelShape shape = kShape;
    shape.stream_k_min_iterations = K::Scheduler::kCutsTiles ? min_iterations : kNoStreamK;
    return plan_schedule(shape, problem, workers());
  }

  // One launch on the schedule `plan`, with the workspace its cut tiles need. A plan that cuts
  // tiles asks for all of its clusters resident at once (a part waits for parts of other clusters:
  // lesson 14); a data-parallel one lets the hardware start clusters as SMs free up.
  static void launch(const GemmArgs& args, const StreamKPlan& plan, cudaStream_t stream,
                     int raster_group = 8) {
    launch_with(params_of(args, plan, raster_group), stream);
  }

  // The two halves of launch, for a caller that adds to the parameters (lesson 19's mainloop).
  static typename K::Params params_of(const GemmArgs& args, const StreamKPlan& plan,
                                      int raster_group) {
    if (!K::Scheduler::can_run(plan))
      throw std::logic_error("a kernel was handed a plan its tile scheduler cannot run");
    const auto& p = args.problem;
    typename K::Params params;
    params.mainloop = K::Mainloop::template make_params<Tile>(args);
    params.epilogue = K::Epilogue::make_params(args);
    params.schedule = {plan, int(ceil_div<int64_t>(p.m, Tile::kBlockM * Tile::kClusterM)),
                       int(ceil_div<int64_t>(p.n, Tile::kBlockN)), raster_group};
    params.workspace = Workspace::in(args.workspace, plan);
    return params;
  }
  static void launch_with(const typename K::Params& params, cudaStream_t stream) {
    const StreamKPlan& plan = params.schedule.plan;
    allow_dynamic_shared_memory<gemm_kernel<K>>(K::kSharedBytes);
    launch_clusters(gemm_kernel<K>, unsigned(plan.workers * Tile::kClusterM), Tile::kClusterM,
                    Tile::kThreads, K::kSharedBytes,
                    plan.sk_tiles > 0 ? Residency::all_at_once : Residency::any,
                    K::Launch::kAfterPrerequisite, stream, params);
  }

  // The workspace of a schedule, the scheduler's: for one that cuts tiles, a flag and a tile of
  // partial sums per block tile of the cut part, of which the flags must be zero when a launch
  // starts and are zero when it ends; none for whole tiles.
  static size_t workspace_bytes(const StreamKPlan& plan) { return Workspace::bytes(plan); }
  static size_t workspace_flag_bytes(const StreamKPlan& plan) {
    return Workspace::flag_bytes(plan);
  }
};

/// The launch of the kernel KernelOf<Kind> whose epilogue kind computes the launch's epilogue
/// (with_epilogue_kind): every kind is compiled, and the plain product runs the plain one; a
/// traced kernel, only the kinds its trace is compiled with (trace.hpp).
template <template <class> class KernelOf>
struct LaunchOfKind {
  const GemmArgs& args;
  const StreamKPlan& plan;
  cudaStream_t stream;
  int raster_group;
  template <class Kind>
  void operator()() const {
    if constexpr (KernelOf<Kind>::Trace::template kCompiledWith<Kind>)
      Configured<KernelOf<Kind>>::launch(args, plan, stream, raster_group);
    else
      throw std::invalid_argument("this traced kernel computes the plain product only");
  }
};
template <template <class> class KernelOf>
void launch_for_epilogue(const GemmArgs& args, const StreamKPlan& plan, cudaStream_t stream,
                         int raster_group = 8) {
  with_epilogue_kind(args.epilogue, LaunchOfKind<KernelOf>{args, plan, stream, raster_group});
}

/// A lesson that runs one configuration of the final kernel (lesson 15): KernelOf<Kind> for every
/// epilogue kind, on Stream-K plans with the threshold MinIterations. The same plan and launch as a
/// table of several (common/hopper/bf16_configurations.hpp), without the choice.
template <template <class> class KernelOf, int64_t MinIterations>
struct OneConfiguration {
  using Plain = Configured<KernelOf<PlainEpilogue>>;
  // No configurations to choose among (gemm::Lesson::configurations), and the kernel's launch
  // policy says whether it waits for the kernel ahead (gemm::Lesson::waits_for_prerequisite).
  static constexpr std::array<Configuration, 0> kConfigurations{};
  static constexpr int kCount = 0;
  static constexpr bool kWaitsForPrerequisite = KernelOf<PlainEpilogue>::Launch::kAfterPrerequisite;

  static LaunchPlan plan(const GemmProblem& problem, int /*configuration*/) {
    const StreamKPlan schedule = Plain::schedule(problem, MinIterations);
    return {-1, schedule, Plain::workspace_bytes(schedule), Plain::workspace_flag_bytes(schedule)};
  }
  static void launch(const GemmArgs& args, const LaunchPlan& plan, cudaStream_t stream) {
    launch_for_epilogue<KernelOf>(args, plan.schedule, stream);
  }
};

/// The registry's entry of a lesson that runs the final kernel through `Configurations` (one
/// configuration, OneConfiguration above, or a table to choose from: lessons 15-17): its plan and
/// launch, and the Stream-K workspace, which starts zeroed and which every launch leaves zeroed
/// (the last part of a tile resets its flags: lesson 14), so the harness zeroes it once, when it
/// allocates it.
template <class Configurations>
constexpr Lesson final_kernel_lesson() {
  return Lesson{
      .min_arch = MinArch::sm90a,
      .zeroed_workspace = true,
      .workspace_resets_itself = true,
      .plan = &Configurations::plan,
      .launch_planned = &Configurations::launch,
      .configurations = Configurations::kConfigurations.data(),
      .configuration_count = Configurations::kCount,
      .waits_for_prerequisite = Configurations::kWaitsForPrerequisite,
  };
}

/// The most stages of a tile that fit in a block's shared memory next to everything else, up to
/// MostStages: the narrower the tile, the more k-slices in flight.
template <template <int> class KernelOfStages, int MostStages = 8>
constexpr int stages_that_fit() {
  if constexpr (KernelOfStages<MostStages>::kSharedBytes <= int(kMaxSharedBytesPerBlock) ||
                MostStages == 2)
    return MostStages;
  else
    return stages_that_fit<KernelOfStages, MostStages - 1>();
}

}  // namespace gemm::hopper
