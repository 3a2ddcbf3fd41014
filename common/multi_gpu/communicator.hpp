#pragma once
// One rank's NCCL communicator, and the few collectives a multi-GPU program needs besides its own:
// a barrier, and exchanges of small host values (IPC handles, check results, timings).

#include <nccl.h>

#include <cstring>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/multi_gpu/nccl_check.hpp"
#include "common/multi_gpu/ranks.hpp"

namespace gemm {

class Communicator {
 public:
  // Collective: every rank constructs one, on its own GPU (the current device). Rank 0 makes
  // NCCL's unique id and sends it to the others through the parent's pipes; ncclCommInitRank
  // then returns on each rank once all of them have joined.
  Communicator(int rank, int ranks, const RankChannels& channels) : rank_(rank), ranks_(ranks) {
    ncclUniqueId id;
    if (rank == 0) {
      NCCL_CHECK(ncclGetUniqueId(&id));
      channels.send_to_others(&id, sizeof(id));
    } else {
      channels.receive_from_rank_zero(&id, sizeof(id));
    }
    NCCL_CHECK(ncclCommInitRank(&comm_, ranks, id, rank));
    token_.resize(1);
    CUDA_CHECK(cudaMemset(token_.get(), 0, token_.bytes()));
  }
  ~Communicator() { ncclCommDestroy(comm_); }  // not checked: a destructor must not throw
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  ncclComm_t get() const { return comm_; }

  // Barrier on the GPU: a one-element all-reduce (max, so the value never changes). What this
  // rank enqueues on `stream` after it starts only when every rank's stream has reached its own
  // barrier, so everything each rank enqueued before it (copies included) has completed.
  void barrier(cudaStream_t stream) {
    NCCL_CHECK(ncclAllReduce(token_.get(), token_.get(), 1, ncclFloat, ncclMax, comm_, stream));
  }

  // Every rank's `bytes` (the same size on every rank), rank by rank, on every rank. Staged
  // through device memory, since NCCL moves device memory only; waits for the result.
  std::vector<unsigned char> all_gather_bytes(const void* bytes, size_t size, cudaStream_t stream) {
    DeviceBuffer<unsigned char> mine(size), everyone(size * size_t(ranks_));
    CUDA_CHECK(cudaMemcpyAsync(mine.get(), bytes, size, cudaMemcpyHostToDevice, stream));
    NCCL_CHECK(ncclAllGather(mine.get(), everyone.get(), size, ncclUint8, comm_, stream));
    std::vector<unsigned char> result(everyone.size());
    CUDA_CHECK(cudaMemcpyAsync(result.data(), everyone.get(), everyone.bytes(),
                               cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return result;
  }

  // The same for a list of numbers: rank r's list at [r * mine.size(), (r + 1) * mine.size()).
  std::vector<double> all_gather(const std::vector<double>& mine, cudaStream_t stream) {
    const std::vector<unsigned char> bytes =
        all_gather_bytes(mine.data(), mine.size() * sizeof(double), stream);
    std::vector<double> everyone(mine.size() * size_t(ranks_));
    std::memcpy(everyone.data(), bytes.data(), bytes.size());
    return everyone;
  }

  // The largest of every rank's value.
  double max_over_ranks(double value, cudaStream_t stream) {
    double largest = value;
    for (const double each : all_gather({value}, stream)) largest = std::max(largest, each);
    return largest;
  }

 private:
  int rank_, ranks_;
  ncclComm_t comm_ = nullptr;
  DeviceBuffer<float> token_;  // the barrier's one element
};

}  // namespace gemm
