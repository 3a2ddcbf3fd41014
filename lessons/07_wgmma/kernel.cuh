// Lesson 07: Hopper's warpgroup MMA (wgmma) reading both operands from shared memory.
//
// mma.sync (lessons 03-06) is a warp instruction: each warp loads its operands into registers with
// ldmatrix and issues 16 x 8 x 16 products. wgmma is a warpgroup instruction (4 warps, 128
// threads): one wgmma.m64n128k16 multiplies a 64 x 16 block of A by a 16 x 128 block of B^T,
// 131072 multiply-adds, reading both operands straight from shared memory. It is asynchronous:
// the warps issue a batch, commit it as a group and wait for the group later.
//
// The rest is lesson 06's pipeline: the block computes a 128 x 128 tile of D (now 2 warpgroups of
// 64 x 128 each), K in slices of 64 through a ring of cp.async stages. The shared tiles keep
// lesson 04's swizzle, which is exactly wgmma's "128-byte swizzle" layout once a tile starts on a
// 1024-byte boundary; a 64-bit descriptor per operand tells wgmma where the tile is and how it is
// laid out. The register fragments of lesson 06 are gone: wgmma needs none.
//
// Graded instruction signature: HGMMA LDGSTS
#pragma once

#include <cstdint>

#include "common/gemm.hpp"
#include "common/launch.hpp"
#include "common/lesson.hpp"
#include "common/ptx/cp_async.hpp"
#include "common/ptx/fence.hpp"
#include "common/ptx/wgmma.hpp"
#include "common/shared_memory.hpp"
#include "common/swizzle.hpp"
#include "common/wgmma_descriptor.hpp"

namespace lesson07 {

using gemm::bf16;

constexpr int kBlockK = 64;  // K per shared-memory slice: rows of 128 bytes
constexpr int kChunk = 8;     // bf16 in one 16-byte chunk
constexpr int kChunksPerRow = kBlockK / kChunk;

// NEW in lesson 07: the tile is split among warpgroups, each computing 64 full-width rows of it
// with wgmma.m64nNk16, N = BlockN.
template <int BlockM_, int BlockN_, int Stages_>
struct TileShape {
  static constexpr int kBlockM = BlockM_, kBlockN = BlockN_;  // the block's tile of D
  static constexpr int kWarpgroupM = 64;                      // rows of one wgmma (m64)
  static constexpr int kWarpgroups = kBlockM / kWarpgroupM;
  static constexpr int kThreads = kWarpgroups * 128;
  static constexpr int kMmaK = 16;                            // K of one wgmma
  static constexpr int kKSteps = kBlockK / kMmaK;             // 16-wide k-steps per slice
  static constexpr int kStages = Stages_;                     // slices in the shared-memory ring
};
// The configuration this lesson runs: 2 warpgroups of 64 x 128 on a 128 x 128 tile, 3 stages (96 KB).
using DefaultTile = TileShape<128, 128, 3>;

// The ring of slices, in dynamic shared memory (more than the 48 KB a block may declare statically).
// NEW in lesson 07: every tile starts on a 1024-byte boundary (16 KB tiles, storage aligned by
// gemm::aligned_shared_storage), as the 128-byte swizzle of wgmma requires.
template <class Tile>
struct SharedStorage {
  alignas(1024) bf16 a[Tile::kStages][Tile::kBlockM * kBlockK];
  alignas(1024) bf16 b[Tile::kStages][Tile::kBlockN * kBlockK];
};

// Where element (row, column) of a slice lives in its shared tile: 64 bf16 (128 bytes) per row,
// the 16-byte chunks of row r permuted by XOR with r % 8 (lesson 04). On a 1024-byte aligned tile
// this is exactly the layout wgmma calls "K-major, 128-byte swizzle".
__device__ inline int tile_offset(int row, int column) { return gemm::swizzled_offset(row, column); }

// Starts copying a slice of `source` (rows x k, row-major) into `tile`: rows row0.. row0 + Rows - 1,
// columns k0 .. k0 + 63. Consecutive threads copy consecutive 16-byte chunks of a row, so a warp
// reads 4 whole 128-byte rows: coalesced. Chunks outside the matrix are zero (K % 8 == 0: a chunk
// is entirely inside or outside).
// With cp.async: the copy goes from global to shared memory without passing through registers,
// and the thread does not wait for it.
template <class Tile, int Rows>
__device__ inline void load_slice_async(const bf16* source, int rows, int k, int row0, int k0,
                                        bf16* tile) {
  static_assert(Rows * kChunksPerRow % Tile::kThreads == 0, "every thread copies as many chunks");
#pragma unroll
  for (int i = 0; i < Rows * kChunksPerRow / Tile::kThreads; ++i) {
    const int index = threadIdx.x + i * Tile::kThreads;
    const int row = index / kChunksPerRow;
    const int column = (index % kChunksPerRow) * kChunk;
    const bool in_bounds = row0 + row < rows && k0 + column < k;
    // Out of bounds: point at the matrix's start (never read: cp.async reads 0 bytes, fills zeros).
    const bf16* chunk = in_bounds ? source + int64_t(row0 + row) * k + k0 + column : source;
    gemm::ptx::cp_async_16(tile + tile_offset(row, column), chunk, in_bounds);
  }
}

// NEW in lesson 07: the wgmma descriptor of one k-step of an operand tile.
// BEGIN TEACHING COPY(kstep_descriptor)
// The wgmma descriptor of k-step `step` of a K-major, 128-byte swizzled tile
// (common/wgmma_descriptor.hpp). Moving 16 elements along K inside the tile is moving the start
// address by 32 bytes: the hardware applies the swizzle to the address it computes.
__device__ inline uint64_t kstep_descriptor(const bf16* tile, int step) {
  return gemm::make_kmajor_sw128_descriptor(gemm::ptx::shared_address(tile) + step * 32);
}
// END TEACHING COPY

// NEW in lesson 07: the epilogue, in wgmma's accumulator layout.
// BEGIN TEACHING COPY(store_rows)
// One warpgroup's 64 rows of accumulators, for the columns col0 .. col0 + 2 * Count - 1 (Count
// fp32 per thread, as wgmma.m64nNk16 with N = 2 * Count lays them out), converted to bf16 and
// stored to rows first_row .. first_row + 63 of D. Warp w of the warpgroup holds rows
// 16w + lane / 4 and 16w + lane / 4 + 8 of the 64; accumulators 4j .. 4j + 3 are columns
// 8j + 2 * (lane % 4) and the next one, in those two rows. N % 8 == 0 and the column is even, so a
// pair is entirely inside D or outside; what lies outside D is not stored.
template <int Count>
__device__ inline void store_rows(__nv_bfloat16* d, const float (&accumulator)[Count],
                                  int first_row, int col0, int m, int n) {
  const int lane = threadIdx.x % 32;
  const int warp_in_group = (threadIdx.x % 128) / 32;
  const int row = first_row + warp_in_group * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < Count / 4; ++j) {
    const int column = col0 + j * 8 + (lane % 4) * 2;
    if (column >= n) continue;
    const float* values = &accumulator[4 * j];
    if (row < m)
      *reinterpret_cast<__nv_bfloat162*>(d + int64_t(row) * n + column) =
          __floats2bfloat162_rn(values[0], values[1]);
    if (row + 8 < m)
      *reinterpret_cast<__nv_bfloat162*>(d + int64_t(row + 8) * n + column) =
          __floats2bfloat162_rn(values[2], values[3]);
  }
}
// END TEACHING COPY

template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads)
    gemm_kernel(int m, int n, int k, const bf16* a, const bf16* b, bf16* d) {
  extern __shared__ unsigned char shared_memory[];
  SharedStorage<Tile>& shared = gemm::aligned_shared_storage<SharedStorage<Tile>>(shared_memory);

  const int tiles_n = gemm::ceil_div(n, Tile::kBlockN);
  const int row0 = (blockIdx.x / tiles_n) * Tile::kBlockM;
  const int col0 = (blockIdx.x % tiles_n) * Tile::kBlockN;

  // NEW in lesson 07: warpgroup g (threads 128g .. 128g + 127) computes rows 64g .. 64g + 63 of
  // the tile, all 128 columns: 64 fp32 accumulators per thread, laid out as described in
  // common/ptx/wgmma.hpp. They are not zeroed: the very first wgmma overwrites them (accumulate =
  // false below). Zeroing them with ordinary instructions would work here, but once wgmmas stay in
  // flight across slices (lesson 09) any non-wgmma write to the accumulators makes ptxas
  // serialize the wgmmas.
  const int warpgroup = threadIdx.x / 128;
  float accumulator[Tile::kBlockN / 2];

  // The ring of lesson 05: slice s goes into stage s % Stages, one cp.async group per slice
  // (possibly empty, past the end of K) so that group counts and slice numbers stay in step.
  const int k_slices = gemm::ceil_div(k, kBlockK);
  const auto start_loading = [&](int slice) {
    if (slice < k_slices) {
      const int stage = slice % Tile::kStages;
      load_slice_async<Tile, Tile::kBlockM>(a, m, k, row0, slice * kBlockK, shared.a[stage]);
      load_slice_async<Tile, Tile::kBlockN>(b, n, k, col0, slice * kBlockK, shared.b[stage]);
    }
    gemm::ptx::cp_async_commit_group();
  };

  // Prologue: put the first Stages - 1 slices in flight.
  for (int slice = 0; slice < Tile::kStages - 1; ++slice) start_loading(slice);

  for (int kt = 0; kt < k_slices; ++kt) {
    // Wait until this thread's copies of slice kt have landed (at most Stages - 2 newer groups
    // may still be in flight) ...
    gemm::ptx::cp_async_wait_group<Tile::kStages - 2>();
    // NEW in lesson 07: ... and make them visible to the async proxy. cp.async writes shared
    // memory through the generic proxy, the path of ordinary loads and stores; wgmma reads it
    // through the async proxy, a separate path with its own ordering. Without this fence wgmma may
    // read the stage before this thread's copies are visible to it.
    gemm::ptx::fence_proxy_async_shared_cta();
    // Barrier: every thread's copies of slice kt have landed and are fenced, so wgmma may read
    // the whole slice; and both warpgroups' wgmmas on slice kt - 1 are complete (each waited for
    // its own below), so that stage is free.
    __syncthreads();
    // Refill the stage that slice kt - 1 used with slice kt + Stages - 1, in the background.
    start_loading(kt + Tile::kStages - 1);

    // NEW in lesson 07: the slice's 4 k-steps as one batch of asynchronous wgmmas. The first
    // k-step of the first slice overwrites the accumulators; every other one adds to them.
    const int stage = kt % Tile::kStages;
    const bf16* a_tile = shared.a[stage] + warpgroup * Tile::kWarpgroupM * kBlockK;  // 8 KB apart
    const bf16* b_tile = shared.b[stage];
    // BEGIN EXERCISE(wgmma_batch): issue the slice's k-steps as one wgmma group and wait for it
    // Fence the accumulators: the compiler must not move their reads or writes across the wgmmas,
    // which read and write them asynchronously.
    gemm::ptx::warpgroup_fence_operand(accumulator);
    // wgmma.fence: this warpgroup's earlier accesses to the accumulator registers
    // are complete before the wgmmas read them.
    gemm::ptx::wgmma_fence();
#pragma unroll
    for (int step = 0; step < Tile::kKSteps; ++step)
      gemm::ptx::wgmma_m64k16_bf16<Tile::kBlockN>(accumulator, kstep_descriptor(a_tile, step),
                                                  kstep_descriptor(b_tile, step),
                                                  /*accumulate=*/kt > 0 || step > 0);
    // Close the batch into one group and wait for it: the stage may be refilled (next iteration)
    // and the accumulators read only once these wgmmas are complete.
    gemm::ptx::wgmma_commit_group();
    gemm::ptx::wgmma_wait_group<0>();
    gemm::ptx::warpgroup_fence_operand(accumulator);
    // END EXERCISE
  }

  // NEW in lesson 07: the epilogue follows wgmma's accumulator layout (store_rows, above).
  store_rows(d, accumulator, row0 + warpgroup * Tile::kWarpgroupM, col0, m, n);
}

// Runs the kernel with any tile configuration (the sweep drivers under profiles/ time others).
template <class Tile>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  const auto& p = args.problem;
  const int64_t tiles =
      gemm::ceil_div<int64_t>(p.m, Tile::kBlockM) * gemm::ceil_div<int64_t>(p.n, Tile::kBlockN);
  // More than 48 KB of dynamic shared memory must be allowed explicitly.
  // NEW in lesson 07: plus room to align the storage to 1024 bytes.
  constexpr int shared_bytes = sizeof(SharedStorage<Tile>) + gemm::kSharedAlignment;
  gemm::allow_dynamic_shared_memory<gemm_kernel<Tile>>(shared_bytes);
  gemm_kernel<Tile><<<unsigned(tiles), Tile::kThreads, shared_bytes, stream>>>(
      int(p.m), int(p.n), int(p.k), args.a, args.b, args.d);
}

inline void launch(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch_tile<DefaultTile>(args, stream);
}

// The launch as the harness takes it, planned: one launch function, nothing to choose.
using Launch = gemm::OneLaunch<&launch>;

inline constexpr gemm::Lesson kLesson{
    .min_arch = gemm::MinArch::sm90a,
    .plan = &Launch::plan,
    .launch_planned = &Launch::launch,
};

}  // namespace lesson07
