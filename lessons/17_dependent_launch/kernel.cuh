// Lesson 17 (a supplement past the ladder): the hand-off between dependent kernels, with
// programmatic dependent launch.
//
// A GEMM rarely runs alone. A transformer's MLP is H = gelu(X W1^T + b1), then Y = H W2^T, and the
// second product cannot start before the first has written H. In stream order the GPU runs them
// strictly one after the other: the second kernel is launched only when the first has finished,
// and then each of its blocks sets up its barriers, fetches its tensor maps and issues its first
// loads before any data flows. At a few hundred tokens each GEMM takes tens of microseconds, and
// those gaps are a visible part of the chain.
//
// Hopper lets the second kernel start early and wait on the device instead:
//   - the launch carries cudaLaunchAttributeProgrammaticStreamSerialization (gemm::launch_clusters
//     with after_prerequisite): the kernel may be scheduled before the one ahead of it in the
//     stream (its prerequisite) has finished;
//   - griddepcontrol.launch_dependents, in the prerequisite, says when: once every block of it has
//     executed the instruction (or exited). It promises nothing about memory: when the dependent
//     starts, the prerequisite may still be writing.
//   - griddepcontrol.wait, in the dependent, is what makes it safe: the thread that executes it
//     waits until the prerequisite has completed and all of its writes are visible. Visibility
//     comes from the wait, never from the trigger.
// The final kernel's body (common/hopper/gemm_kernel.cuh) leaves two places to a launch policy, in
// its producer thread: before the block's first TMA load, and once the loads of its last work item
// are issued. Everything before the first load (barrier set-up, tensor-map prefetch, the cluster
// barrier, setmaxnreg) touches nothing the kernel ahead writes, and every other access of the block
// to global memory comes after one of its loads. So this lesson is a launch policy: lesson 15's
// kernel in lesson 16's configurations, launched as a dependent.
//
// The launch is not cooperative (gemm::launch_clusters): a cooperative grid starts only when all
// of it fits on the GPU, after the kernel ahead has left, and then nothing overlaps. Lesson 16's
// cost model picks the configuration per problem, and the executable also runs the MLP chain of
// two GEMMs four ways (`lesson17 chain`, README).
// Graded instruction signature: HGMMA UTMALDG.2D.MULTICAST UTMASTG STSM USETMAXREG ACQBULK PREEXIT
#pragma once

#include <cuda_runtime_api.h>

#include "common/gemm.hpp"
#include "common/hopper/bf16_configurations.hpp"
#include "common/lesson.hpp"
#include "common/ptx/grid_dependency.hpp"

namespace lesson17 {

// NEW in lesson 17: the final kernel's launch policy (common/hopper/launch_policy.hpp) for a
// dependent launch.
struct DependentLaunch {
  static constexpr bool kAfterPrerequisite = true;
  // The producer thread, before the block's first load: the prerequisite's writes (A, B, C, the
  // bias: any of them may be what the kernel ahead produced) must be complete and visible before
  // it, and that kernel may still read what this one is about to overwrite (D, the workspace).
  __device__ static void before_first_load() {
    // BEGIN EXERCISE(wait_for_prerequisite): make everything the kernel ahead wrote visible to
    //   this grid before the block's first load, and keep the block from writing what that kernel
    //   may still read
    gemm::ptx::wait_for_prerequisite_grids();
    // END EXERCISE
  }
  // The producer thread, once every load of the block is issued: the kernel behind may be
  // scheduled (when every block has said so) and run its prologue on the SMs this grid frees.
  __device__ static void after_last_load() {
    // BEGIN EXERCISE(let_dependents_start): let the kernel behind in the stream be scheduled
    gemm::ptx::launch_dependent_grids();
    // END EXERCISE
  }
};

// Lesson 16's configurations and cost model, launched as dependents.
using Configurations = gemm::taught::Bf16Configurations<DependentLaunch>;

inline constexpr gemm::Lesson kLesson = gemm::hopper::final_kernel_lesson<Configurations>();

}  // namespace lesson17
