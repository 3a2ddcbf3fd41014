#pragma once
/// The final kernel's launch policy (common/hopper/gemm_kernel.cuh): how its launch is ordered
/// after the kernel ahead of it in the stream, and what its producer thread does about it before
/// the block's first load and after its last one.
///
///   kAfterPrerequisite   the host launches the kernel as a dependent of the kernel ahead
///                        (programmatic dependent launch, gemm::launch_clusters)
///   before_first_load    the producer thread, before the first TMA load of the block: every
///                        other access of the block to global memory comes after one of its loads
///   after_last_load      the producer thread, once every load of the block is issued
///
/// StreamOrder, the policy of lessons 15 and 16: in stream order, after everything ahead has
/// finished, and nothing to do. Lesson 17 teaches the other policy, the dependent launch.

namespace gemm::hopper {

struct StreamOrder {
  static constexpr bool kAfterPrerequisite = false;
#if defined(__CUDACC__)
  __device__ static void before_first_load() {}
  __device__ static void after_last_load() {}
#endif
};

}  // namespace gemm::hopper
