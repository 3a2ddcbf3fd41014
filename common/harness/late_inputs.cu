#include "common/harness/late_inputs.hpp"

#include <stdexcept>
#include <string>

#include "common/cuda_check.hpp"
#include "common/ptx/grid_dependency.hpp"

namespace gemm {
namespace {

struct LateCopies {
  LateCopy copy[kMaxLateCopies];
  int count;
};

struct LateWatches {
  LateWatch watch[kMaxLateWatches];
  int count;
};

__global__ void write_inputs_late_kernel(LateCopies copies, LateWatches watches,
                                         const volatile int* gate, int64_t spin_steps, int* sink,
                                         unsigned long long* changed) {
  // The kernel behind may start now: every block of this one says so before anything else.
  if (threadIdx.x == 0) {
    ptx::launch_dependent_grids();
    while (*gate == 0) __nanosleep(1000);  // until the host has enqueued the kernel behind
  }
  __syncthreads();
  // A chain of dependent operations the compiler cannot shorten (its result is stored, never 0).
  uint32_t value = threadIdx.x + 1;
  for (int64_t step = 0; step < spin_steps; ++step) value = value * 1664525u + 1013904223u;
  if (value == 0) *sink = 1;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
#pragma unroll  // constant indices: the parameters stay in the parameter space
  for (int i = 0; i < kMaxLateCopies; ++i) {
    if (i >= copies.count) break;
    for (int64_t e = first; e < copies.copy[i].count; e += stride)
      copies.copy[i].input[e] = copies.copy[i].saved[e];
  }
  // Last, what the kernel behind has written so far: it may write only after its wait, which
  // returns once this kernel has completed, so nothing may have changed yet.
#pragma unroll
  for (int i = 0; i < kMaxLateWatches; ++i) {
    if (i >= watches.count) break;
    unsigned long long differing = 0;
    for (int64_t w = first; w < watches.watch[i].words; w += stride)
      differing += watches.watch[i].memory[w] != watches.watch[i].snapshot[w];
    if (differing > 0) atomicAdd(&changed[i], differing);
  }
}

}  // namespace

LateInputWriter::LateInputWriter() {
  Shared* host = nullptr;
  CUDA_CHECK(cudaHostAlloc(&host, sizeof(Shared), cudaHostAllocMapped));
  *host = Shared{};
  host->gate = 1;
  host_ = host;
  CUDA_CHECK(cudaHostGetDevicePointer(&device_, host, 0));
}

LateInputWriter::~LateInputWriter() {
  if (!host_) return;
  open_gate();
  // A writer still enqueued reads the gate until it ends: free the memory after it.
  cudaDeviceSynchronize();
  cudaFreeHost(const_cast<Shared*>(host_));
}

void LateInputWriter::enqueue(const LateCopy* copies, int count, const LateWatch* watches,
                              int watch_count, cudaStream_t stream) {
  if (count < 0 || count > kMaxLateCopies)
    throw std::invalid_argument("LateInputWriter: at most 4 inputs");
  if (watch_count < 0 || watch_count > kMaxLateWatches)
    throw std::invalid_argument("LateInputWriter: at most 2 watched buffers");
  LateCopies all{};
  for (int i = 0; i < count; ++i) all.copy[i] = copies[i];
  all.count = count;
  LateWatches watched{};
  for (int i = 0; i < watch_count; ++i) watched.watch[i] = watches[i];
  watched.count = watch_count;
  // A few blocks, so that most SMs are free for the kernel behind from its start.
  int device = 0, sm_count = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  const int blocks = sm_count / 8 > 0 ? sm_count / 8 : 1;
  for (int i = 0; i < kMaxLateWatches; ++i) host_->changed[i] = 0;
  host_->gate = 0;
  __sync_synchronize();
  write_inputs_late_kernel<<<blocks, 256, 0, stream>>>(all, watched, &device_->gate,
                                                       kLateInputsSpinSteps, &device_->sink,
                                                       device_->changed);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) open_gate();
  CUDA_CHECK(status);
}

void LateInputWriter::open_gate() {
  __sync_synchronize();
  host_->gate = 1;
  __sync_synchronize();
}

int64_t LateInputWriter::changed_words(int watch) const {
  if (watch < 0 || watch >= kMaxLateWatches)
    throw std::invalid_argument("LateInputWriter: no watched buffer " + std::to_string(watch));
  return int64_t(host_->changed[watch]);
}

}  // namespace gemm
