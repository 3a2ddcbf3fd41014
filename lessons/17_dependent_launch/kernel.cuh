// Lesson 17 (a supplement past the ladder): the hand-off between dependent kernels, with
// programmatic dependent launch.
//
// A GEMM rarely runs alone. A transformer's MLP is H = gelu(X W1^T + b1), then Y = H W2^T, and the
// second product cannot start before the first has written H. In stream order the GPU runs them
// strictly one after the other: the second kernel is launched only when the first has finished,
// and then each of its blocks sets up its barriers, fetches its tensor maps and issues its first
// loads before any data flows. At a few hundred tokens each GEMM takes tens of microseconds, and
// those gaps are a visible part of the chain.
//
// Hopper lets the second kernel start early and wait on the device instead:
//   - the launch carries cudaLaunchAttributeProgrammaticStreamSerialization (gemm::launch_clusters
//     with after_prerequisite): the kernel may be scheduled before the one ahead of it in the
//     stream (its prerequisite) has finished;
//   - griddepcontrol.launch_dependents, in the prerequisite, says when: once every block of it has
//     executed the instruction (or exited). It promises nothing about memory: when the dependent
//     starts, the prerequisite may still be writing.
//   - griddepcontrol.wait, in the dependent, is what makes it safe: the thread that executes it
//     waits until the prerequisite has completed and all of its writes are visible. Visibility
//     comes from the wait, never from the trigger.
// So the kernel below is lesson 15's with two lines added. Its producer thread waits before the
// block's first TMA load: everything before that (barrier set-up, tensor-map prefetch, the cluster
// barrier, setmaxnreg) overlaps the end of the kernel ahead. Every other access to global memory
// in the block comes after a load: the consumers read C, the bias and Stream-K's partial sums, and
// store D, only once the producer's loads have filled the ring. And the producer signals the next
// kernel as soon as it has issued the loads of its last work item: from then on, nothing this
// block does stands in the way of the next kernel's prologue.
//
// The launch is not cooperative (gemm::launch_clusters): a cooperative grid starts only
// when all of it fits on the GPU, after the kernel ahead has left, and then nothing overlaps. The
// lesson runs in every configuration of lesson 16 (its cost model picks one per problem), and its
// executable also runs the MLP chain of two GEMMs four ways (`lesson17 chain`, README).
// Graded instruction signature: HGMMA UTMALDG.2D.MULTICAST UTMASTG STSM USETMAXREG ACQBULK PREEXIT
#pragma once

#include <cstdint>

#include "common/gemm.hpp"
#include "common/lesson.hpp"
#include "common/ptx/grid_dependency.hpp"
#include "lessons/15_tma_store_epilogue/kernel.cuh"
#include "lessons/16_shape_heuristics/kernel.cuh"

namespace lesson17 {

using gemm::taught::load_k_range_multicast;  // lesson 12's producer loop
using gemm::taught::mma_k_range;             // lesson 09's consumer loop
using gemm::taught::producer_tail;           // lesson 12's exit
using gemm::taught::stream_k_fixup;          // lesson 14's fixup
using lesson15::consumer_registers;
using lesson15::kProducerRegisters;
using lesson15::post_item;
using lesson15::kWorkQueueDepth;
using lesson15::EpilogueParams;
using lesson15::SharedStorage;
using lesson15::store_tail;  // lesson 15's epilogue
using lesson15::store_item;

// Lesson 15's kernel, started as a dependent of the kernel ahead of it in the stream.
template <class Tile, class Kind>
__global__ void __launch_bounds__(Tile::kThreads, lesson15::kBlocksPerSm)
    gemm_kernel(int m, int n, const __grid_constant__ CUtensorMap a_map,
                const __grid_constant__ CUtensorMap b_map,
                const __grid_constant__ CUtensorMap d_map,
                const __grid_constant__ CUtensorMap c_map,
                const __grid_constant__ CUtensorMap bias_map, int raster_group,
                const gemm::StreamKPlan plan, gemm::hopper::StreamKWorkspace<Tile> workspace,
                EpilogueParams params) {
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);
  auto& pipeline = shared.pipeline;
  auto& queue = shared.queue;

  // Cluster c of the persistent grid is worker c of the Stream-K plan (lesson 14).
  const uint32_t rank = gemm::ptx::cluster_cta_rank();
  const gemm::hopper::StreamKWorkItems<Tile> schedule{
      plan, gemm::ptx::cluster_id_x(), gemm::ceil_div(m, Tile::kBlockM * Tile::kClusterM),
      gemm::ceil_div(n, Tile::kBlockN), raster_group, rank};
  const int warpgroup = threadIdx.x / 128;

  // Thread 0 sets up the barriers (lessons 09, 12 and 13); the cluster barrier makes them visible
  // to both blocks. NEW in lesson 17: none of this touches what the kernel ahead writes (the
  // tensor maps are this launch's parameters), so it runs while that kernel finishes.
  if (threadIdx.x == 0) {
    gemm::ptx::prefetch_tensor_map(&a_map);
    gemm::ptx::prefetch_tensor_map(&b_map);
    gemm::ptx::prefetch_tensor_map(&d_map);
    queue.init(/*consumer_warps=*/Tile::kConsumers * 4);
    if constexpr (Kind::kFused) lesson15::init_epilogue_loader(shared);  // lesson 15
    pipeline.init(/*consumer_warps=*/Tile::kConsumers * 4);
  }
  gemm::ptx::cluster_sync();

  if (warpgroup == 0) {
    // ---- Producer warpgroup: registers down; one thread posts every work item and loads it. ----
    gemm::ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) {
      // NEW in lesson 17: the prerequisite's writes (A, B, C, the bias: any of them may be what the
      // kernel ahead produced) must be complete and visible before the first load of this block,
      // and that kernel may still read what this one is about to overwrite (D, the workspace).
      // BEGIN EXERCISE(wait_for_prerequisite, places=wait_for_prerequisite_grids): the producer's
      //   work of lesson 15 is given; place the wait for the kernel ahead in the stream where
      //   every load of this block (and so every later access of the block to global memory) comes
      //   after it, and as late as that allows
      auto write_state = gemm::PipelineState<Tile::kStages>::producer_start();
      gemm::ptx::wait_for_prerequisite_grids();
      for (int64_t i = 0; i < schedule.count(); ++i) {
        const gemm::hopper::WorkItem item = schedule.item(i);
        post_item<Tile, Kind>(shared, i, item);  // lesson 15: to the epilogue loader too
        load_k_range_multicast<Tile>(pipeline, shared.ring, a_map, b_map, item.row0, item.col0,
                                     rank, item.k_begin, item.k_end, write_state);
      }
      // END EXERCISE
      // NEW in lesson 17: once every load of this block is issued, the kernel behind may be
      // scheduled (when every block has said so) and run its prologue on the SMs this grid frees.
      // BEGIN EXERCISE(let_dependents_start, places=launch_dependent_grids): the end of the
      //   producer's work is given; place the signal that lets the kernel behind be scheduled,
      //   once nothing this block still does needs it to wait
      gemm::ptx::launch_dependent_grids();
      post_item<Tile, Kind>(shared, schedule.count(), gemm::hopper::WorkItem{});  // the end
      producer_tail(pipeline, write_state);  // lesson 12: before this block may exit
      // END EXERCISE
    } else if (Kind::kFused && threadIdx.x == lesson15::kEpilogueLoaderThread) {
      // Lesson 15's epilogue loader. C and the bias may be what the kernel ahead wrote (a residual
      // connection): its first load comes after the first item that the thread above posts to it,
      // so after that thread's wait, which made all of the kernel ahead's writes visible to this
      // whole grid.
      lesson15::load_epilogue_inputs<Tile, Kind>(shared, c_map, bias_map, params);
    }
    return;
  }

  // ---- Consumer warpgroups: registers up; each its rows of every item (lesson 10). ----
  gemm::ptx::setmaxnreg_inc<consumer_registers<Tile>()>();
  const int consumer = warpgroup - 1;
  const int first_row = consumer * Tile::kConsumerRows;
  float accumulator[Tile::kRowBlocks][Tile::kBlockN / 2];
  int stored = 0;  // lesson 15: the tiles stored so far (where the epilogue's rings stand)
  auto read_state = gemm::PipelineState<Tile::kStages>::consumer_start();
  auto receive_state = gemm::PipelineState<kWorkQueueDepth>::consumer_start();
  while (true) {
    const gemm::hopper::WorkItem item = queue.receive(receive_state);
    if (item.is_end()) break;
    const auto last_stage = mma_k_range<Tile>(pipeline, shared.ring, accumulator, first_row,
                                              item.k_begin, item.k_end, read_state);
    gemm::hopper::mma_drain(pipeline, accumulator, last_stage);
    if (!stream_k_fixup<Tile>(workspace, item, accumulator)) continue;  // lesson 14
    // Lesson 15: the epilogue through shared memory and TMA stores.
    store_item<Tile, Kind>(shared, d_map, accumulator, consumer, item, params, stored++);
  }
  store_tail();  // lesson 15
}

// NEW in lesson 17: lesson 15's launch (lesson15::launch_kind) starts this kernel, as a dependent.
template <class Tile, class Kind>
struct DependentLaunch {
  static constexpr auto kernel = gemm_kernel<Tile, Kind>;
  static constexpr bool kAfterPrerequisite = true;
};

// Lesson 16's configurations with this kernel, and its cost model's choice among them: the
// same resources and the same Stream-K plans, so the same choice and the same workspace.
inline constexpr const auto& kConfigurations = lesson16::kConfigurationsOf<DependentLaunch>;

inline constexpr gemm::Lesson kLesson{
    .id = 17,
    .parent = 16,
    .slug = "dependent_launch",
    .title = "programmatic dependent launch: the next GEMM starts while the one ahead finishes",
    .launch = &lesson16::launch_chosen<DependentLaunch>,
    .workspace_bytes = &lesson16::workspace_bytes,
    .min_arch = gemm::MinArch::sm90a,
    .zeroed_workspace = true,
    .workspace_resets_itself = true,
    .workspace_flag_bytes = &lesson16::workspace_flag_bytes,
    .fused_epilogue = true,
    .configurations = kConfigurations.data(),
    .configuration_count = lesson16::kConfigurationCount,
    .chosen_configuration = &lesson16::chosen_configuration,
    .waits_for_prerequisite = true,
};

}  // namespace lesson17
