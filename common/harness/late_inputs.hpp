#pragma once
// The check of a kernel that waits on the device for the kernel ahead of it (lesson 17): its
// inputs arrive late.
//
// A kernel launched as a dependent (gemm::launch_clusters, after_prerequisite) may start before the kernel
// ahead of it in the stream has finished, and must execute griddepcontrol.wait before it reads
// what that kernel writes. Run alone, a kernel that forgets the wait still computes the right
// result: nothing is writing its inputs. So the check puts a writer ahead of it: the inputs are
// saved and poisoned, and one kernel lets its dependents start at once, then copies the saved
// inputs back, late. A kernel that reads before its wait reads poison (NaN), and the check fails.
//
// "Late" must hold however long the host takes to enqueue the kernel behind: the writer first
// waits for a gate in host memory that the host opens only once that kernel is enqueued, then
// spins a fixed count of dependent operations (time in which the kernel behind, had it not waited,
// reads its first inputs; a count of operations, not of nanoseconds, so that a GPU shared with
// other processes, which stops the whole context now and then, does not shorten it), then copies.
//
// Writing too early is the same mistake the other way round: the kernel ahead may still read what
// the kernel behind is about to overwrite (its output D, its workspace), as the second GEMM of one
// MLP still reads the buffer that the first GEMM of the next one writes. So the writer also
// watches that memory: last of all, after its copies, it compares each watched buffer with a
// snapshot taken before the kernel behind was enqueued, and counts what changed. Anything the
// kernel behind wrote before its wait had time to land there by then.

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

// Memory the kernel behind must not write before its wait: `words` 2-byte words at `memory`, and
// a snapshot of them taken before that kernel was enqueued.
struct LateWatch {
  const uint16_t* memory;
  const uint16_t* snapshot;
  int64_t words;
};

inline constexpr int kMaxLateWatches = 2;  // D (with its guard zone) and the workspace

// The writer's spin after the gate opens, the time a kernel behind has to start and read its first
// inputs: ten times the 100,000 steps that took 0.1-0.2 ms on an H100. A tenth of it once let a
// kernel without the wait pass the check (its launch started later than that, while the host ran
// many tests at once).
inline constexpr int64_t kLateInputsSpinSteps = 1'000'000;

class LateInputWriter {
 public:
  LateInputWriter();   // allocates the gate and the counts of early writes (mapped host memory)
  ~LateInputWriter();  // opens the gate if it is still closed, so no writer waits forever
  LateInputWriter(const LateInputWriter&) = delete;
  LateInputWriter& operator=(const LateInputWriter&) = delete;

  // Closes the gate and enqueues the writer on `stream`: it executes
  // griddepcontrol.launch_dependents, waits for the gate, spins, copies each `saved` into its
  // `input`, then counts the words of each watched buffer that differ from their snapshot. Only a
  // kernel launched as a dependent right after it can start before it ends. Needs sm_90a.
  void enqueue(const LateCopy* copies, int count, const LateWatch* watches, int watch_count,
               cudaStream_t stream);
  // The kernel behind the writer is enqueued: the writer may go on.
  void open_gate();
  // Once the writer has finished (synchronize first): how many words of watched buffer `watch`
  // had changed when it compared them, that is, were written before the kernel behind waited.
  int64_t changed_words(int watch) const;

 private:
  // Mapped host memory, seen by the host through these pointers and by the GPU through device_.
  struct Shared {
    int gate;         // 0: the writer waits; 1: it may go on
    int sink;         // where the writer's spin stores nothing, in effect
    unsigned long long changed[kMaxLateWatches];
  };
  volatile Shared* host_ = nullptr;
  Shared* device_ = nullptr;
};

}  // namespace gemm
