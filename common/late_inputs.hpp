#pragma once
// The check of a kernel that waits on the device for the kernel ahead of it (lesson 17): its
// inputs arrive late.
//
// A kernel launched as a dependent (gemm::launch_after_prerequisite) may start before the kernel
// ahead of it in the stream has finished, and must execute griddepcontrol.wait before it reads
// what that kernel writes. Run alone, a kernel that forgets the wait still computes the right
// result: nothing is writing its inputs. So the check puts a writer ahead of it: the inputs are
// saved and poisoned, and one kernel lets its dependents start at once, waits a while, then
// copies the saved inputs back. A kernel that reads before its wait reads poison (NaN), and the
// check fails.

#include <cstdint>

#include <cuda_runtime_api.h>

#include "common/gemm.hpp"

namespace gemm {

// One input to restore: `count` elements from `saved` to `input`.
struct LateCopy {
  const bf16* saved;
  bf16* input;
  int64_t count;
};

inline constexpr int kMaxLateCopies = 4;  // A, B, C and the bias

// How long the writer waits before it copies: long enough for every block of the kernel behind
// it to be running, and to have read its first inputs, had it not waited.
inline constexpr int64_t kLateInputsDelayNs = 50'000;

// Enqueues the writer: it executes griddepcontrol.launch_dependents first, then waits
// kLateInputsDelayNs, then copies each `saved` into its `input`. Only a kernel launched as a
// dependent right after it starts early; anything else waits for it as usual. Needs sm_90a.
void write_inputs_late(const LateCopy* copies, int count, cudaStream_t stream);

}  // namespace gemm
