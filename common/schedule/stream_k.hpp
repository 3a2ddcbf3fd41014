#pragma once
// Stream-K (lesson 14): how the k-iterations of the tiles are shared out among the workers of a
// persistent grid when the tile count leaves the last wave half empty.
//
// A persistent grid of W workers computes T tiles of K k-iterations each. Data-parallel, worker w
// takes tiles w, w + W, ...: with T = q W + r and 0 < r < W, the last wave keeps only r workers
// busy while the others wait. 4224^3 with 2-block clusters of 128 x 256 tiles has 289 cluster
// tiles for 66 clusters: 4 full waves and 25 tiles, a fifth wave with 62% of the GPU idle.
//
// The hybrid used here (as CUTLASS's "data-parallel + Stream-K"):
//   - the first sk_tiles tiles (the tail, plus one full wave if there is one, so that every
//     worker gets at least a tile's worth) are cut into one range of k-iterations per worker,
//     of equal length to within one iteration: worker w takes iterations
//     [begin(w), end(w)) of the sk_tiles * K iterations, tile by tile;
//   - the other tiles stay whole (data-parallel), worker w taking sk_tiles + w, + W, ...
// Each worker's range covers parts of one or more tiles: its units. A tile cut into n units is
// finished by the unit that holds its last k-iteration (the final unit): the others leave fp32
// partial sums in a workspace, in the order of their k-ranges, and the final unit adds them and
// stores the tile.
//
// Work items, in the order a worker does them: its Stream-K units first (from its last tile to
// its first, see below), then its data-parallel tiles. A worker's first tile is usually the END
// of a tile whose beginning belongs to the worker before it: the final unit, which must wait for
// the others. Doing that one last gives the other workers time to finish their part: the waits
// are short. (The README measures both orders.)
//
// When Stream-K does not pay, the plan is data-parallel only (sk_tiles = 0): when the tiles fill
// whole waves, when the last wave is nearly full anyway (at least 80% of the workers busy), or
// when each worker's share would be shorter than `min_iterations` (the cost of writing and
// reading a tile of partial sums would not be repaid): kStreamKMinIterations unless the caller
// says otherwise (lesson 16 also compiles a policy that splits shorter shares, for problems
// whose tiles are fewer than the SMs).
//
// Pure host + device functions, unit-tested on the CPU. Counts are int64_t.

#include <cstdint>

#include "common/host_device.hpp"

namespace gemm {

// The shortest share of k-iterations per worker for which the plan uses Stream-K.
inline constexpr int64_t kStreamKMinIterations = 8;

struct StreamKPlan {
  int64_t tiles = 0;         // all tiles
  int64_t workers = 0;       // persistent workers (clusters)
  int64_t k_iterations = 0;  // per tile
  int64_t sk_tiles = 0;      // tiles 0 .. sk_tiles - 1 are cut into units; 0: data-parallel only
  int64_t share = 0;         // k-iterations per worker in the Stream-K part ...
  int64_t longer = 0;        // ... plus one for workers 0 .. longer - 1
  bool reverse = true;       // units from the worker's last tile to its first
};

// A plan that cuts no tile: whole tiles, on no more workers than there are tiles.
GEMM_HOST_DEVICE constexpr StreamKPlan plan_data_parallel(int64_t tiles, int64_t workers,
                                                          int64_t k_iterations, bool reverse = true) {
  StreamKPlan plan;
  plan.tiles = tiles;
  plan.workers = tiles < workers ? tiles : workers;
  plan.k_iterations = k_iterations;
  plan.reverse = reverse;
  return plan;
}

// The plan for `tiles` tiles of `k_iterations` each on `workers` workers.
GEMM_HOST_DEVICE constexpr StreamKPlan plan_stream_k(
    int64_t tiles, int64_t workers, int64_t k_iterations, bool reverse = true,
    int64_t min_iterations = kStreamKMinIterations) {
  StreamKPlan plan;
  plan.tiles = tiles;
  plan.workers = workers;
  plan.k_iterations = k_iterations;
  plan.reverse = reverse;
  const int64_t full_waves = tiles / workers;
  const int64_t tail = tiles % workers;
  // Whole waves, a last wave at least 80% full, or shares too short: data-parallel, on no more
  // workers than there are tiles.
  const int64_t sk_tiles = tail + (full_waves > 0 ? workers : 0);
  const int64_t iterations = sk_tiles * k_iterations;
  if (tail == 0 || 5 * tail >= 4 * workers || iterations / workers < min_iterations)
    return plan_data_parallel(tiles, workers, k_iterations, reverse);
  plan.sk_tiles = sk_tiles;
  plan.share = iterations / workers;
  plan.longer = iterations % workers;
  return plan;
}

// Split-K (lesson 16): every tile cut into the same number of parts along K, one part per worker,
// for problems whose tiles are fewer than the workers and whose K is long (1024 x 1024 x 16384:
// 64 tiles of 128 x 128 for 132 SMs). It is a Stream-K plan whose share divides a tile's
// k-iterations: each worker gets exactly one unit, every tile's parts are equal, and no tile is cut
// into a sliver of a few iterations (a Stream-K share of 124 cuts 256-iteration tiles into parts of
// 124, 124 and 8, and the part of 8 costs a whole fixup). The parts: the most for which every worker
// has one (tiles * parts <= workers), the parts divide the tile's k-iterations, and each part has at
// least `min_iterations`. Data-parallel when no tile can be cut into two such parts.
GEMM_HOST_DEVICE constexpr StreamKPlan plan_split_k(int64_t tiles, int64_t workers,
                                                    int64_t k_iterations,
                                                    int64_t min_iterations = kStreamKMinIterations) {
  int64_t parts = 1;
  for (int64_t cut = 2; tiles * cut <= workers && k_iterations / cut >= min_iterations; ++cut)
    if (k_iterations % cut == 0) parts = cut;
  StreamKPlan plan = plan_data_parallel(tiles, workers, k_iterations);
  if (parts == 1) return plan;
  plan.workers = tiles * parts;
  plan.sk_tiles = tiles;
  plan.share = k_iterations / parts;
  return plan;
}

// The range [first, last) of Stream-K iterations (over all sk_tiles tiles, tile t holding
// t * K .. t * K + K - 1) of a worker.
GEMM_HOST_DEVICE constexpr int64_t stream_k_begin(const StreamKPlan& plan, int64_t worker) {
  return worker * plan.share + (worker < plan.longer ? worker : plan.longer);
}
GEMM_HOST_DEVICE constexpr int64_t stream_k_end(const StreamKPlan& plan, int64_t worker) {
  return stream_k_begin(plan, worker) + plan.share + (worker < plan.longer ? 1 : 0);
}

// The worker whose range holds Stream-K iteration `iteration`.
GEMM_HOST_DEVICE constexpr int64_t stream_k_owner(const StreamKPlan& plan, int64_t iteration) {
  const int64_t in_longer = plan.longer * (plan.share + 1);
  return iteration < in_longer ? iteration / (plan.share + 1)
                               : plan.longer + (iteration - in_longer) / plan.share;
}

// One work item: k-iterations [k_begin, k_end) of tile `tile`, the unit-th of the tile's
// `units` units in the order of their k-ranges. A data-parallel tile is the one unit [0, K).
struct StreamKWork {
  int64_t tile = 0;
  int64_t k_begin = 0, k_end = 0;
  int64_t unit = 0, units = 1;

  GEMM_HOST_DEVICE constexpr bool is_first() const { return unit == 0; }
  GEMM_HOST_DEVICE constexpr bool is_final() const { return unit == units - 1; }
};

// How many Stream-K units a worker has: the tiles its range touches.
GEMM_HOST_DEVICE constexpr int64_t stream_k_unit_count(const StreamKPlan& plan, int64_t worker) {
  if (plan.sk_tiles == 0) return 0;
  const int64_t first = stream_k_begin(plan, worker), last = stream_k_end(plan, worker);
  return first == last ? 0 : (last - 1) / plan.k_iterations - first / plan.k_iterations + 1;
}

// How many data-parallel tiles a worker has.
GEMM_HOST_DEVICE constexpr int64_t data_parallel_count(const StreamKPlan& plan, int64_t worker) {
  const int64_t tiles = plan.tiles - plan.sk_tiles;
  return worker < tiles ? (tiles - worker + plan.workers - 1) / plan.workers : 0;
}

// All of a worker's work items.
GEMM_HOST_DEVICE constexpr int64_t stream_k_work_count(const StreamKPlan& plan, int64_t worker) {
  return stream_k_unit_count(plan, worker) + data_parallel_count(plan, worker);
}

// A worker's item-th work item (0 <= item < stream_k_work_count).
GEMM_HOST_DEVICE constexpr StreamKWork stream_k_work(const StreamKPlan& plan, int64_t worker,
                                                     int64_t item) {
  StreamKWork work;
  const int64_t units = stream_k_unit_count(plan, worker);
  if (item >= units) {  // a data-parallel tile
    work.tile = plan.sk_tiles + worker + (item - units) * plan.workers;
    work.k_begin = 0;
    work.k_end = plan.k_iterations;
    return work;
  }
  const int64_t K = plan.k_iterations;
  const int64_t first = stream_k_begin(plan, worker), last = stream_k_end(plan, worker);
  const int64_t first_tile = first / K;
  work.tile = plan.reverse ? (last - 1) / K - item : first_tile + item;
  const int64_t tile_begin = work.tile * K;
  work.k_begin = (first > tile_begin ? first : tile_begin) - tile_begin;
  work.k_end = (last < tile_begin + K ? last : tile_begin + K) - tile_begin;
  // The units of this tile, in k order, belong to the workers that own its first and last
  // iteration and those in between.
  const int64_t first_owner = stream_k_owner(plan, tile_begin);
  work.unit = worker - first_owner;
  work.units = stream_k_owner(plan, tile_begin + K - 1) - first_owner + 1;
  return work;
}

// The k-iterations of all of a worker's work items, counted item by item (the cost model of lesson
// 16 and its tests compare their shortcut with this count).
GEMM_HOST_DEVICE constexpr int64_t stream_k_worker_iterations(const StreamKPlan& plan,
                                                              int64_t worker) {
  int64_t iterations = 0;
  for (int64_t item = 0; item < stream_k_work_count(plan, worker); ++item) {
    const StreamKWork work = stream_k_work(plan, worker, item);
    iterations += work.k_end - work.k_begin;
  }
  return iterations;
}

}  // namespace gemm
