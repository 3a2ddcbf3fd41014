#pragma once
// How a producer of a cluster ends (lessons 12-15): before its block may exit, it waits until the
// consumers of every block of the cluster have released every stage of its ring.
// Lesson 12 spells it out (tests/tools/test_teaching_copies.py keeps the two identical).

#include "common/gemm.hpp"
#include "common/ptx/mbarrier.hpp"
#include "common/schedule/pipeline_state.hpp"

namespace gemm::taught {

#if defined(__CUDACC__)
// BEGIN TEACHING COPY(producer_tail)
// `state` is where the producer stopped: the stage it would fill next. The consumers' last
// releases of the cluster arrive on this block's empty barriers, one round of the ring after the
// producer's last acquires; waiting for that round of every stage means no consumer of the cluster
// will reach into this block's shared memory again.
template <class Pipeline>
__device__ inline void producer_tail(Pipeline& pipeline, typename Pipeline::State& state) {
  for (int stage = 0; stage < Pipeline::kStages; ++stage) {
    gemm::ptx::mbarrier_wait(&pipeline.empty[state.index], state.phase);
    state.advance();
  }
}
// END TEACHING COPY
#endif

}  // namespace gemm::taught
