#pragma once
// Where a thread stands in a multi-stage shared-memory ring: which stage, and which phase of that
// stage's barriers it waits for. Producers and consumers each keep one and advance it once per
// stage they fill or drain.
//
// Each stage s has a FULL barrier (the producer's TMA bytes have landed; consumers wait on it)
// and an EMPTY barrier (the consumers are done reading; the producer waits on it). On its k-th
// use of the ring (k = 0, 1, 2, ...) a thread uses stage k % Stages for the (k / Stages)-th time,
// and `phase` is the low bit of k / Stages, XOR the start phase: it flips each time `index` wraps
// around. Consumers wait for phase k / Stages of FULL to complete (start phase 0); producers wait
// for phase k / Stages - 1 of EMPTY, the consumers' release of the previous round (start phase 1).

#include <cstdint>

#include "common/host_device.hpp"

namespace gemm {

template <int Stages>
struct PipelineState {
  static_assert(Stages >= 1, "a pipeline needs at least one stage");

  int index = 0;       // the stage to use next, 0 .. Stages - 1
  uint32_t phase = 0;  // the parity to pass to mbarrier_wait for that stage's barrier

  // Moves to the next stage; wrapping around from the last stage to stage 0 flips the phase.
  GEMM_HOST_DEVICE constexpr void advance() {
    ++index;
    if (index == Stages) {
      index = 0;
      phase ^= 1u;
    }
  }

  // Moves `count` stages on at once: where `count` calls of advance() would leave it. A
  // ping-pong consumer (lesson 11) skips the other consumer's slices this way.
  GEMM_HOST_DEVICE constexpr void advance(int count) {
    const int position = index + count;
    phase ^= uint32_t(position / Stages) & 1u;
    index = position % Stages;
  }

  // The state `count` stages on from this one, which stays where it is (lesson 15 places its
  // epilogue's rings from a count of stored tiles this way).
  GEMM_HOST_DEVICE constexpr PipelineState advanced(int count) const {
    PipelineState moved = *this;
    moved.advance(count);
    return moved;
  }

  // Where consumers start: stage 0, waiting for phase 0 of the FULL barriers, the phase that
  // completes when the producer's first loads have landed.
  GEMM_HOST_DEVICE static constexpr PipelineState consumer_start() { return {0, 0}; }

  // Where producers start: stage 0, but on the opposite phase, 1. The producer waits on EMPTY
  // barriers before filling a stage, and on its first pass through the ring nobody has arrived
  // at them: they are fresh, in phase 0. A wait on parity 1 of a fresh barrier returns at once
  // (see common/ptx/mbarrier.hpp), so the first pass does not block; from the second pass on,
  // parity 0 makes the producer wait until the consumers have released the stage.
  GEMM_HOST_DEVICE static constexpr PipelineState producer_start() { return {0, 1}; }
};

}  // namespace gemm
