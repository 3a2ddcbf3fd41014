#pragma once
// setmaxnreg: moving registers between the warpgroups of a warp-specialized block.
//
// A block is launched with one register count per thread for all its warps. Producer warpgroups
// (they only issue TMA) need few; consumer warpgroups (they hold wgmma accumulators) need many.
// setmaxnreg.dec releases registers of the calling warpgroup to a per-CTA pool and
// setmaxnreg.inc takes registers from it (blocking until enough are free), so that for example
// a 384-thread block launched at 168 registers runs a producer at 40 and two consumers at 232.
//
// Requirements (breaking one is a build error at best, undefined behaviour at worst):
//   - the kernel must have `__launch_bounds__(threads, 1)` (or another register cap known at
//     entry, e.g. --maxrregcount): without it ptxas cannot know the starting count, ignores
//     setmaxnreg and says so with the "info" message C7508, which this course's build turns into an
//     error (tests/ptxas_guard.sh);
//   - all 128 threads of a warpgroup execute the same setmaxnreg (.sync.aligned): branch on the
//     warpgroup index (threadIdx.x / 128), never on anything that differs within a warpgroup;
//   - counts are in [24, 256] and multiples of 8, and the totals must fit the register file.

#include <cstdint>

#include "common/ptx/arch.hpp"

namespace gemm::ptx {

// setmaxnreg.inc: raises the calling warpgroup's register limit to `Registers` per thread
// (consumer warpgroups, which keep the wgmma accumulators in registers).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#miscellaneous-instructions-setmaxnreg
template <uint32_t Registers>
__device__ inline void setmaxnreg_inc() {
  static_assert(Registers >= 24 && Registers <= 256 && Registers % 8 == 0,
                "setmaxnreg needs a register count in [24, 256] that is a multiple of 8");
#if GEMM_PTX_SM90A
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" : : "n"(Registers));
#else
  __trap();
#endif
}

// setmaxnreg.dec: lowers the calling warpgroup's register limit to `Registers` per thread and
// returns the rest to the pool (producer warpgroups, which only issue TMA loads).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#miscellaneous-instructions-setmaxnreg
template <uint32_t Registers>
__device__ inline void setmaxnreg_dec() {
  static_assert(Registers >= 24 && Registers <= 256 && Registers % 8 == 0,
                "setmaxnreg needs a register count in [24, 256] that is a multiple of 8");
#if GEMM_PTX_SM90A
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" : : "n"(Registers));
#else
  __trap();
#endif
}

}  // namespace gemm::ptx
