#pragma once
// One buffer per rank, each mapped into every other rank's address space
// through CUDA IPC, so that a copy on one rank's stream can read or write another rank's memory.
// The copy engines do such a copy over NVLink (or PCIe) without any SM on either GPU.

#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/multi_gpu/communicator.hpp"

namespace gemm {

class PeerMemory {
 public:
  // Collective: every rank passes its own buffer, allocated with cudaMalloc (an IPC handle names
  // a whole allocation, so `local` must be the start of one). The handles travel to every rank
  // through an all-gather; each rank opens the others' handles and keeps its own pointer for
  // itself (a process cannot open its own handle). Rank r runs on device r.
  PeerMemory(void* local, Communicator& comm, cudaStream_t stream)
      : rank_(comm.rank()), pointers_(size_t(comm.ranks()), nullptr) {
    cudaIpcMemHandle_t handle;
    CUDA_CHECK(cudaIpcGetMemHandle(&handle, local));
    const std::vector<unsigned char> handles =
        comm.all_gather_bytes(&handle, sizeof(handle), stream);
    pointers_[size_t(rank_)] = local;
    for (int peer = 0; peer < comm.ranks(); ++peer) {
      if (peer == rank_) continue;
      int reachable = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&reachable, rank_, peer));
      if (!reachable)
        throw_cuda_error("cudaDeviceCanAccessPeer", "GPU " + std::to_string(rank_) +
                                   " cannot reach GPU " + std::to_string(peer) +
                                   "'s memory directly (no peer-to-peer path)",
                               __FILE__, __LINE__);
      cudaIpcMemHandle_t peer_handle;
      std::memcpy(&peer_handle, handles.data() + size_t(peer) * sizeof(peer_handle),
                  sizeof(peer_handle));
      // The flag enables peer access from this device to the peer's memory for this mapping,
      // which copies between the two GPUs need.
      CUDA_CHECK(cudaIpcOpenMemHandle(&pointers_[size_t(peer)], peer_handle,
                                      cudaIpcMemLazyEnablePeerAccess));
    }
  }

  // Closes the mappings of the other ranks' buffers. Their owners may free them only after every
  // rank has closed its mappings: the owner of PeerMemory objects destroys them, then passes a
  // barrier, then frees the buffers (main.cu).
  ~PeerMemory() {
    for (size_t peer = 0; peer < pointers_.size(); ++peer)
      if (int(peer) != rank_ && pointers_[peer]) cudaIpcCloseMemHandle(pointers_[peer]);
  }
  PeerMemory(const PeerMemory&) = delete;
  PeerMemory& operator=(const PeerMemory&) = delete;

  // Rank `rank`'s buffer, as this process addresses it.
  template <class T>
  T* of(int rank) const {
    return static_cast<T*>(pointers_[size_t(rank)]);
  }

 private:
  int rank_;
  std::vector<void*> pointers_;
};

}  // namespace gemm
