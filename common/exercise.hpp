#pragma once
// The stand-in for an exercise region that a homework hand-out leaves for the student to write
// (`make homework`, docs/grading.md). Each cut region holds one call:
//
//   gemm::exercise::unwritten();
//
// It builds under the course's flags (no spill, no serialized wgmma: it is inlined and needs one
// register) and, when it runs, stops the kernel at once with a trap. The lesson executable then
// fails fast with a CUDA error instead of computing garbage or waiting forever on a barrier that
// the missing code would have completed.
//
// The trap sits behind a branch on a global that is always 1. The compiler cannot prove that (the
// host could change it), so it keeps the branch and the code after the region: an unconditional
// trap lets it treat the rest of the kernel as unreachable, which has crashed ptxas inside a wgmma
// pipeline. The global is not volatile, so that the compiler may read it once per thread even
// where the region is inlined hundreds of times (lesson 04's layout function): a read per call
// costs registers, and spills are build errors in this course.

#include <cstdio>
#include <cstdlib>

#include "common/host_device.hpp"

namespace gemm::exercise {

// Always 1. `static`: one copy per translation unit, so that a program linked from several of
// them never sees two definitions.
[[maybe_unused]] static __device__ int unwritten_guard = 1;

// Stops the kernel (device code) or the program (host code: a layout function the grader checks
// on the host).
GEMM_HOST_DEVICE inline void unwritten() {
#if defined(__CUDA_ARCH__)
  if (unwritten_guard) __trap();
#else
  std::fprintf(stderr, "an exercise region of this lesson is not written yet\n");
  std::abort();
#endif
}

}  // namespace gemm::exercise
