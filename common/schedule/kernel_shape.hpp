#pragma once
/// What the host knows of a configuration of the final kernel (lessons 15-19), without its code:
/// the tile, the cluster, the k-slice of its operands, its Stream-K threshold, its consumers,
/// stages and epilogue subtiles; and the one function that makes its schedule for a problem,
/// which the launch runs and lesson 16's cost model estimates (common/schedule/shape_model.hpp).
/// Host and device; unit-tested on the CPU.

#include <cstdint>

#include "common/gemm.hpp"
#include "common/host_device.hpp"
#include "common/schedule/stream_k.hpp"

namespace gemm {

struct KernelShape {
  int block_m, block_n;  // the tile of D that one block computes
  int cluster_m;         // blocks per cluster along M: each loads 1 / cluster_m of B (multicast)
  int64_t stream_k_min_iterations;  // the threshold of the configuration's Stream-K plans
  int slice_k = 64;                 // values of K per k-iteration: a 128-byte row of the operands
  int operand_bytes = 2;            // of one value of A and B: 2 for bf16, 1 for e4m3
  bool pingpong = false;            // two warpgroups take whole tiles in turns (lesson 11)
  int stages = 4;                   // slices in the shared-memory ring
  int subtile_columns = 64;         // the width of the epilogue's subtiles (lesson 15)
  bool split_k = false;  // its schedules cut every tile into equal parts instead (plan_split_k)
  int cluster_n = 1;     // blocks per cluster along N, where cluster_m is 1: they share A's slice
};

// The threshold of a configuration that never cuts tiles: a data-parallel schedule.
inline constexpr int64_t kNoStreamK = INT64_MAX;

// The schedule of a configuration for a problem on `workers` resident clusters: its cluster tiles
// (cluster_m tile rows by one tile column each), each of K / slice_k k-iterations, shared out by
// lesson 14's Stream-K plan (from a worker's last tile to its first), or cut by split-K.
GEMM_HOST_DEVICE constexpr StreamKPlan plan_schedule(const KernelShape& shape,
                                                     const GemmProblem& p, int64_t workers) {
  const int64_t cluster_tiles = ceil_div<int64_t>(p.m, int64_t(shape.block_m) * shape.cluster_m) *
                                ceil_div<int64_t>(p.n, int64_t(shape.block_n) * shape.cluster_n);
  const int64_t k_iterations = ceil_div<int64_t>(p.k, shape.slice_k);
  if (shape.split_k)
    return plan_split_k(cluster_tiles, workers, k_iterations, shape.stream_k_min_iterations);
  return plan_stream_k(cluster_tiles, workers, k_iterations, /*reverse=*/true,
                       shape.stream_k_min_iterations);
}

}  // namespace gemm
