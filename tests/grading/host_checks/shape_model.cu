// Host check shape_model: the two terms of lesson 16's cost model that a submission writes,
// graded::busiest_worker_iterations(plan) and graded::iteration_ns(shape, costs).
//
// Any configuration runs the product correctly, so the correctness runs cannot tell a wrong model
// from the right one: it only picks slower configurations on some shapes. This check can:
//   - the busiest worker's k-iterations must be the most that any worker of the plan has, counted
//     item by item from the plan's work lists (common/schedule/stream_k.hpp), over data-parallel
//     and Stream-K plans, full waves and ragged ones;
//   - one k-iteration must take the longest of the tensor cores' time for the block's tile
//     (graded::tensor_core_ns), the time of its loads from L2 (A's rows, and 1 / cluster_m of B's)
//     and the loads' latency over the stages in flight, for tiles, clusters and rings of each
//     bound, bf16 and e4m3 k-iterations.
//
// The grader compiles it after the submission's kernel.cuh and `namespace graded = ...;`
// (build.py); it returns 0 when both terms pass, 1 otherwise, and prints what it found.
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace shape_model_check {

int64_t counted_busiest(const gemm::StreamKPlan& plan) {
  int64_t most = 0;
  for (int64_t worker = 0; worker < plan.workers; ++worker) {
    const int64_t iterations = gemm::stream_k_worker_iterations(plan, worker);
    most = iterations > most ? iterations : most;
  }
  return most;
}

int run() {
  int failures = 0;
  for (int64_t tiles : {1, 5, 16, 64, 66, 67, 128, 132, 133, 289, 561})
    for (int64_t workers : {3, 66, 132})
      for (int64_t k : {1, 4, 16, 64, 224})
        for (int64_t min_iterations : {int64_t(2), int64_t(8), int64_t(1) << 40}) {
          const gemm::StreamKPlan plan = gemm::plan_stream_k(tiles, workers, k, true, min_iterations);
          const int64_t expected = counted_busiest(plan);
          const int64_t got = graded::busiest_worker_iterations(plan);
          if (got != expected && failures++ < 10)
            std::printf("FAIL busiest_worker_iterations: %lld tiles of %lld k-iterations on %lld "
                        "workers (%s): %lld, the plan's busiest worker has %lld\n",
                        (long long)tiles, (long long)k, (long long)workers,
                        plan.sk_tiles ? "Stream-K" : "data-parallel", (long long)got,
                        (long long)expected);
        }

  // bf16 tiles (64 values of K, 2 bytes each, per k-iteration) and e4m3 ones (128 values, 1 byte).
  const gemm::KernelShape shapes[] = {{128, 256, 2, 8},
                                      {128, 256, 1, 8},
                                      {128, 128, 2, 8},
                                      {128, 64, 1, 2},
                                      {128, 128, 2, gemm::kNoStreamK, 128, 1},
                                      {64, 128, 1, gemm::kNoStreamK, 128, 1}};
  for (gemm::KernelShape shape : shapes)
    for (int stages : {2, 4, 8})
      for (double l2 : {1.0, 30.0, 56.0, 1e9})
        for (double latency : {0.0, 1745.0, 1e6}) {
          shape.stages = stages;
          graded::MachineCosts costs = graded::kH100Costs;
          costs.l2_bytes_per_ns_per_sm = l2;
          costs.load_latency_ns = latency;
          const double mma_ns = double(shape.block_m) *
                                (shape.block_n + costs.wgmma_extra_columns) * shape.slice_k /
                                costs.macs_per_ns_per_sm;
          const double load_ns = double(shape.block_m + shape.block_n / shape.cluster_m) *
                                 shape.slice_k * shape.operand_bytes / l2;
          const double expected = std::fmax(std::fmax(mma_ns, load_ns), latency / stages);
          const double got = graded::iteration_ns(shape, costs);
          if (!(std::fabs(got - expected) <= 1e-9 * expected) && failures++ < 10)
            std::printf("FAIL iteration_ns: tile %d x %d, cluster %d, %d stages, %d values of %d "
                        "bytes per k-iteration, %g L2 bytes per ns, %g ns of latency: %g ns, "
                        "expected %g\n",
                        shape.block_m, shape.block_n, shape.cluster_m, stages, shape.slice_k,
                        shape.operand_bytes, l2, latency, got, expected);
        }
  if (failures == 0) std::printf("PASS the busiest worker and the k-iteration's bound\n");
  return failures == 0 ? 0 : 1;
}

}  // namespace shape_model_check

int main() { return shape_model_check::run(); }
