#pragma once
// Fences between the memory "proxies" of Hopper: the generic proxy (ordinary loads and stores,
// cp.async, stmatrix) and the async proxy (TMA and wgmma reading or writing shared memory).

#include "common/ptx/arch.hpp"

namespace gemm::ptx {

// fence.proxy.async.shared::cta: makes this thread's earlier generic-proxy writes to shared memory
// (ordinary stores, cp.async, stmatrix) visible to later async-proxy reads of it (wgmma, TMA).
// Without it wgmma or a TMA store may read stale shared memory. Each writing thread issues it
// after its writes and before the barrier that hands the data to the async proxy.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-membar
__device__ inline void fence_proxy_async_shared_cta() {
#if GEMM_PTX_SM90A
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#else
  __trap();
#endif
}

// fence.proxy.async.global: orders this thread's earlier accesses to global memory through the
// generic proxy (an acquire load of a flag, say) before its later async-proxy accesses to global
// memory (TMA loads). Lesson 19's producer issues it between the acquire of a flag that says rows
// of A have landed and the TMA loads that read them.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-membar
__device__ inline void fence_proxy_async_global() {
#if GEMM_PTX_SM90A
  asm volatile("fence.proxy.async.global;" ::: "memory");
#else
  __trap();
#endif
}

// fence.mbarrier_init.release.cluster: makes this thread's earlier mbarrier.init visible to the
// other threads of the cluster and to the async proxy (TMA completes transactions on the barrier),
// so no one arrives at or waits on a barrier that is not initialized yet. Issue it once after the
// inits, then synchronize the block (or the cluster) before anyone uses the barriers.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-membar
__device__ inline void fence_mbarrier_init() {
#if GEMM_PTX_SM90A
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#else
  __trap();
#endif
}

}  // namespace gemm::ptx
