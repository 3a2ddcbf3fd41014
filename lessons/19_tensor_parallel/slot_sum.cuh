#pragma once
// NEW in lesson 19: the last step of the overlapped reduce-scatter. Rank r's receive buffer holds
// G slots of R x D bf16 rows, slot q the rows of Y_r from rank q's partial P_q, in the token order
// of rank r's shard: pushed there by rank q's copy engine, or for q = r written there by rank r's
// own second GEMM. Y_r is their sum:
//
//   Y_r = bf16( P_0 + P_1 + ... + P_{G-1} )     added in fp32, in the order q = 0, 1, ..., G-1,
//                                              rounded to bf16 once, to nearest even
//
// The order is fixed, so the result does not depend on which rank's copy landed first, and every
// rank adds in the same order. Each P_q was rounded to bf16 by the GEMM that wrote it; what that
// costs in accuracy is in the README ("How it is checked").

#include <algorithm>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/gemm.hpp"
#include "common/ptx/memory_order.hpp"

namespace lesson19 {

// The two bf16 values of a 32-bit word as floats (exact: a bf16 is the top half of a float).
__device__ inline float low_bf16(uint32_t word) { return __uint_as_float(word << 16); }
__device__ inline float high_bf16(uint32_t word) { return __uint_as_float(word & 0xFFFF0000u); }

// Two floats rounded to bf16 (to nearest even) and packed into a word, the first in the low half.
__device__ inline uint32_t pack_bf16(float low, float high) {
  const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
  return uint32_t(__bfloat16_as_ushort(pair.x)) | (uint32_t(__bfloat16_as_ushort(pair.y)) << 16);
}

// Adds the 8 bf16 values of a 16-byte vector to sum[0..7], in fp32.
__device__ inline void add_bf16x8(float (&sum)[8], uint4 packed) {
  const uint32_t words[4] = {packed.x, packed.y, packed.z, packed.w};
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    sum[2 * w] += low_bf16(words[w]);
    sum[2 * w + 1] += high_bf16(words[w]);
  }
}

// The 8 sums rounded to bf16 (to nearest even), as a 16-byte vector.
__device__ inline uint4 pack_bf16x8(const float (&sum)[8]) {
  return make_uint4(pack_bf16(sum[0], sum[1]), pack_bf16(sum[2], sum[3]),
                    pack_bf16(sum[4], sum[5]), pack_bf16(sum[6], sum[7]));
}

// NEW in lesson 19: when the sum may start. The overlapped variant's slots are written by the
// other ranks' copy engines, and each rank's copy stream signals when its pushes have landed
// (one flag per rank, holding the layer's epoch): the sum's blocks wait for those flags
// themselves, so the stream runs the sum right after the last GEMM, with no wait of its own.
struct SlotsLanded {
  const uint32_t* flags = nullptr;  // one per sending rank; none: the slots are written already
  int count = 0;
  uint32_t epoch = 0;
};

// Each thread sums 8 elements (one 16-byte vector) of every slot at a time, once every flag of
// `landed` holds its epoch (thread 0 of each block acquires them; the block barrier passes the
// acquire on to the block's other threads).
__global__ void sum_slots_kernel(const uint4* slots, int slot_count, int64_t vectors_per_slot,
                                 uint4* y, SlotsLanded landed) {
  if (threadIdx.x == 0)
    for (int q = 0; q < landed.count; ++q)
      while (int32_t(gemm::ptx::load_acquire_sys(landed.flags + q) - landed.epoch) < 0) {
      }
  __syncthreads();
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < vectors_per_slot;
       v += int64_t(gridDim.x) * blockDim.x) {
    float sum[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int slot = 0; slot < slot_count; ++slot) add_bf16x8(sum, slots[slot * vectors_per_slot + v]);
    y[v] = pack_bf16x8(sum);
  }
}

// Y (slot_elements bf16 values) = the sum of `slot_count` slots laid out one after the other,
// once they have landed. slot_elements must be a multiple of 8 (R x D is: D is), and both buffers
// 16-byte aligned.
inline void sum_slots(const gemm::bf16* slots, int slot_count, int64_t slot_elements,
                      gemm::bf16* y, cudaStream_t stream, const SlotsLanded& landed = {}) {
  const int64_t vectors = slot_elements / 8;
  const int threads = 256;
  const int blocks = int(std::min<int64_t>(gemm::ceil_div<int64_t>(vectors, threads), 2048));
  sum_slots_kernel<<<blocks, threads, 0, stream>>>(reinterpret_cast<const uint4*>(slots),
                                                   slot_count, vectors,
                                                   reinterpret_cast<uint4*>(y), landed);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace lesson19
