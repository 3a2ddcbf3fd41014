#pragma once
// Thread-block clusters (lessons 12 on): a group of CTAs launched together on neighbouring SMs,
// which can read, write and arrive on each other's shared memory ("distributed shared memory").

#include <cstdint>

#include "common/ptx/arch.hpp"

namespace gemm::ptx {

// This CTA's rank in its cluster, 0 .. cluster size - 1.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#special-registers-cluster-ctarank
__device__ inline uint32_t cluster_cta_rank() {
#if GEMM_PTX_SM90A
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
#else
  __trap();
  return 0;
#endif
}

// The cluster's index in the grid along x (the grid holds gridDim.x / cluster size clusters).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#special-registers-clusterid
__device__ inline uint32_t cluster_id_x() {
#if GEMM_PTX_SM90A
  uint32_t id;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(id));
  return id;
#else
  __trap();
  return 0;
#endif
}

// barrier.cluster.arrive.release: this thread has arrived at the cluster-wide barrier; its earlier
// writes (shared memory of any CTA of the cluster included) are released to the threads that
// wait. Every thread of every CTA of the cluster must arrive before any wait returns. .aligned:
// all threads of the warp execute it together.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-barrier-cluster
__device__ inline void cluster_arrive() {
#if GEMM_PTX_SM90A
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#else
  __trap();
#endif
}

// barrier.cluster.wait.acquire: waits until every thread of the cluster has arrived, and makes
// their released writes visible to this thread.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-barrier-cluster
__device__ inline void cluster_wait() {
#if GEMM_PTX_SM90A
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
  __trap();
#endif
}

// The whole cluster meets: arrive, then wait.
__device__ inline void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

// mapa: the shared::cluster address of the variable at `shared_address` (this CTA's
// shared::cta address) in the shared memory of CTA `cta_rank` of the cluster. Every CTA has the
// same layout, so the same variable sits at the same offset in each.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-mapa
__device__ inline uint32_t map_to_cluster_cta(uint32_t shared_address, uint32_t cta_rank) {
#if GEMM_PTX_SM90A
  uint32_t mapped;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(mapped)
               : "r"(shared_address), "r"(cta_rank));
  return mapped;
#else
  __trap();
  return 0;
#endif
}

// mbarrier.arrive on a barrier in the shared memory of any CTA of the cluster (an address from
// map_to_cluster_cta, this CTA's own included): counts one arrival there. A consumer tells the
// producers of the cluster that it has finished reading a stage they multicast into.
// The default semantics, release at CTA scope, are enough: what must be ordered before the
// arrival are the consumer's wgmma reads of its own shared memory, already complete
// (wgmma_wait_group). A .release.cluster arrival would add a cluster-wide memory fence before
// every arrival: measured, it halved the speed of lesson 12 (warps stalled on the fence).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-mbarrier-arrive
__device__ inline void mbarrier_arrive_cluster(uint32_t cluster_barrier_address) {
#if GEMM_PTX_SM90A
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];"
               :
               : "r"(cluster_barrier_address)
               : "memory");
#else
  __trap();
#endif
}

}  // namespace gemm::ptx
