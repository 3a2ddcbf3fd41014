#pragma once
// The named barriers of the course's kernels (common/ptx/named_barrier.hpp), handed out in one
// place so that no two uses collide. A block has 16; __syncthreads() is barrier 0.

#include <cstdint>

namespace gemm::hopper {

enum NamedBarrier : uint32_t {
  kBlockBarrier = 0,      // __syncthreads(): the whole block (never used by name)
  kConsumersBarrier = 1,  // every consumer thread of the block: the Stream-K fixup (lesson 14)
  kEpilogueBarrier = 2,   // consumer c's own, kEpilogueBarrier + c: the TMA-store epilogue (lesson 15)
};

}  // namespace gemm::hopper
