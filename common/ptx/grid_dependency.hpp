#pragma once
// griddepcontrol: the two device halves of programmatic dependent launch (lesson 17).
//
// A kernel launched with cudaLaunchAttributeProgrammaticStreamSerialization (gemm::launch_clusters
// with after_prerequisite) may start before the kernel ahead of it in the stream, its
// prerequisite, has finished. The two instructions below say when:
//   - launch_dependents, in the prerequisite: its dependents may be scheduled once every block of
//     it has executed this (or exited). It is a hint about timing only: nothing the prerequisite
//     wrote is promised to be visible when the dependent starts.
//   - wait, in the dependent: the executing thread waits until every prerequisite grid has
//     completed and its memory operations are performed and visible to this grid. Every read of
//     what the prerequisite wrote, and every write that it might still read, must come after it.
// Without the launch attribute both are harmless: there is no dependent to schedule, and nothing
// to wait for.

#include "common/ptx/arch.hpp"

namespace gemm::ptx {

// griddepcontrol.wait: waits for the prerequisite grids to complete and their memory to be visible.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-griddepcontrol
__device__ inline void wait_for_prerequisite_grids() {
#if GEMM_PTX_SM90A
  asm volatile("griddepcontrol.wait;" : : : "memory");
#else
  __trap();
#endif
}

// griddepcontrol.launch_dependents: lets the dependent grids be scheduled once every block of this
// grid has done so or exited. One thread of a block is enough; repeating it changes nothing.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-griddepcontrol
__device__ inline void launch_dependent_grids() {
#if GEMM_PTX_SM90A
  asm volatile("griddepcontrol.launch_dependents;" : : : "memory");
#else
  __trap();
#endif
}

}  // namespace gemm::ptx
