#pragma once
// mbarrier: the shared-memory barrier object that Hopper pipelines synchronize on.
//
// A barrier is one 64-bit word in shared memory. It counts down two things per phase: pending
// arrivals (set by init, one per mbarrier_arrive) and pending transaction bytes (raised by
// expect_tx, lowered by TMA as its bytes land). When both reach zero the current phase completes:
// the barrier moves to the next phase, the phase's parity bit flips, and the counts start over.
//
// Phases and parity, precisely:
//   - a freshly initialized barrier is in phase 0 (parity 0), and no phase has completed yet;
//   - mbarrier_wait(barrier, parity) returns once the phase with that parity has completed,
//     i.e. once the barrier's current phase parity differs from `parity`. It only looks at the
//     current and the immediately preceding phase, so a waiter may never fall two phases behind;
//   - hence waiting on parity 0 of a fresh barrier blocks until phase 0 completes, while waiting
//     on parity 1 of a fresh barrier returns immediately (the "phase -1" before it counts as done).
// That last rule is why pipeline producers start on the opposite phase from consumers (see
// common/schedule/pipeline_state.hpp): a producer's first wait on each EMPTY barrier, which no
// consumer has released yet, must not block.

#include <cstdint>

#include "common/ptx/arch.hpp"

namespace gemm::ptx {

// mbarrier.init: sets up the barrier in shared memory for `arrive_count` arrivals per phase (and
// phase 0). One thread initializes; fence_mbarrier_init() and a block sync must follow.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-mbarrier-init
__device__ inline void mbarrier_init(uint64_t* barrier, uint32_t arrive_count) {
#if GEMM_PTX_SM90A
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;"
               :
               : "r"(shared_address(barrier)), "r"(arrive_count)
               : "memory");
#else
  __trap();
#endif
}

// mbarrier.arrive: counts one arrival of this thread in the current phase (consumers releasing a
// stage, for example). The returned state token is not needed, so it goes to the sink `_`.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-mbarrier-arrive
__device__ inline void mbarrier_arrive(uint64_t* barrier) {
#if GEMM_PTX_SM90A
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];"
               :
               : "r"(shared_address(barrier))
               : "memory");
#else
  __trap();
#endif
}

// mbarrier.arrive.expect_tx: announces that `tx_bytes` more bytes will land in the current phase
// (the TMA loads about to be issued) and counts one arrival, in one instruction. The phase then
// completes only when those bytes have arrived too, so the producer can arrive before its loads.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-mbarrier-arrive
__device__ inline void mbarrier_arrive_expect_tx(uint64_t* barrier, uint32_t tx_bytes) {
#if GEMM_PTX_SM90A
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               :
               : "r"(shared_address(barrier)), "r"(tx_bytes)
               : "memory");
#else
  __trap();
#endif
}

// mbarrier.try_wait.parity in a loop: returns once the phase with parity `phase_parity` has
// completed (see the top of this file). try_wait itself suspends the thread for a while in
// hardware before reporting "not yet", so the loop does not need a back-off of its own. Its
// default acquire semantics make the data of the completed phase (TMA bytes, or the consumers'
// last reads of a stage) visible to this thread after it returns.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-mbarrier-test-wait-try-wait
__device__ inline void mbarrier_wait(uint64_t* barrier, uint32_t phase_parity) {
#if GEMM_PTX_SM90A
  const uint32_t address = shared_address(barrier);
  uint32_t phase_completed = 0;
  do {
    asm volatile(
        "{\n"
        "  .reg .pred completed;\n"
        "  mbarrier.try_wait.parity.shared::cta.b64 completed, [%1], %2;\n"
        "  selp.u32 %0, 1, 0, completed;\n"
        "}\n"
        : "=r"(phase_completed)
        : "r"(address), "r"(phase_parity)
        : "memory");
  } while (phase_completed == 0);
#else
  __trap();
#endif
}

}  // namespace gemm::ptx
