#pragma once
// The cost model of lesson 16: which configuration of the final kernel a problem runs, from the
// busiest worker's k-iterations (the waves), the time of one k-iteration (tensor cores, L2 reads or
// the loads' latency over the stages), the DRAM stream, the epilogue's subtiles that no MMA hides,
// the Stream-K units and partial sums, and the launch. It
// estimates the schedule that the configuration's launch runs (gemm::plan_schedule), which the
// caller hands it.
// Taught in lesson 16: lessons/16_shape_heuristics/kernel.cuh spells it out with its exercise
// regions (tests/tools/test_teaching_copies.py keeps the two identical). Host code, unit-tested on
// the CPU (tests/host/shape_model_test.cpp).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/gemm.hpp"
#include "common/schedule/kernel_shape.hpp"
#include "common/schedule/stream_k.hpp"

namespace gemm::taught {

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
// when its last worker does. With T whole tiles of K iterations on W workers, that is
// ceil(T / W) * K: the last wave costs as much as a full one however few tiles it holds. A Stream-K
// plan gives every worker its share of the cut tiles (one iteration more for the first `longer`
// workers) before its whole tiles. The wave efficiency of a plan is the work it has,
// T * K, over the work its workers could have done meanwhile, W times this.
inline int64_t busiest_worker_iterations(const gemm::StreamKPlan& plan) {
  const int64_t stream_k_share =
      plan.sk_tiles == 0 ? 0 : plan.share + (plan.longer > 0 ? 1 : 0);
  return stream_k_share + gemm::data_parallel_count(plan, 0) * plan.k_iterations;
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
// one block. The producer runs ahead of the consumers by the ring's stages, so loading the next
// slices and multiplying this one overlap, and the slowest of three sets the pace: the tensor
// cores' time for the tile's multiply-adds; the time L2 takes to serve the block's own loads of A
// and B; and the loads' latency shared among the stages in flight, which is what a ring of few
// stages waits for. A block loads all of its A rows but only 1 / cluster_m of B: the cluster's
// multicast brings the rest, which L2 reads once for all the blocks of the cluster. So the bytes
// counted are those L2 reads for the block, not those it receives: a 128 x 256 block of bf16 in a
// cluster of two receives (128 + 256) x 128 bytes per k-iteration and is charged (128 + 128) x 128.
inline double iteration_ns(const gemm::KernelShape& shape, const MachineCosts& costs) {
  const double mma_ns = tensor_core_ns(shape, costs);
  const double load_ns = l2_load_ns(shape, costs);
  const double slowest = mma_ns > load_ns ? mma_ns : load_ns;
  const double latency_ns = costs.load_latency_ns / shape.stages;
  return slowest > latency_ns ? slowest : latency_ns;
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

}  // namespace gemm::taught
