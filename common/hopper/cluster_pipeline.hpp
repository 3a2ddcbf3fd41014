#pragma once
// The TMA pipeline of a cluster (lessons 12-15): lesson 09's pipeline (common/hopper/pipeline.hpp)
// when every producer of a cluster of ClusterSize blocks multicasts part of B into every block's
// stage. A stage of any block may then be refilled only when the consumers of EVERY block have
// released it: each empty barrier expects ClusterSize times the block's consumer warps, and each
// consumer warp arrives on the stage's empty barrier in every block of the cluster.
// Taught in lesson 12: lessons/12_cluster_multicast/kernel.cuh spells it out with its exercise
// region (tests/tools/test_teaching_copies.py keeps the two identical).

#include <cstdint>

#include "common/hopper/pipeline.hpp"
#include "common/ptx/arch.hpp"
#include "common/ptx/cluster.hpp"

namespace gemm::taught {

#if defined(__CUDACC__)
// BEGIN TEACHING COPY(ClusterTmaPipeline)
// The producer's verbs are lesson 09's; the consumers' release reaches every block. The
// arrival needs no cluster-wide fence before it (common/ptx/cluster.hpp): the wgmma reads it
// vouches for are already complete.
template <int Stages, int ClusterSize>
struct ClusterTmaPipeline : gemm::hopper::TmaPipeline<Stages> {
  using Base = gemm::hopper::TmaPipeline<Stages>;
  using State = typename Base::State;

  // `consumer_warps`: the warps of ONE block that release each stage.
  __device__ void init(int consumer_warps) { Base::init(consumer_warps * ClusterSize); }

  __device__ void consumer_release(const State& state) {
    if (threadIdx.x % 32 != 0) return;
    const uint32_t barrier = gemm::ptx::shared_address(&this->empty[state.index]);
#pragma unroll
    for (uint32_t rank = 0; rank < uint32_t(ClusterSize); ++rank)
      gemm::ptx::mbarrier_arrive_cluster(gemm::ptx::map_to_cluster_cta(barrier, rank));
  }
};
// END TEACHING COPY
#endif

}  // namespace gemm::taught
