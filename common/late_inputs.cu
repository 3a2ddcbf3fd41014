#include "common/late_inputs.hpp"

#include <stdexcept>

#include "common/cuda_check.hpp"
#include "common/ptx/grid_dependency.hpp"

namespace gemm {
namespace {

struct LateCopies {
  LateCopy copy[kMaxLateCopies];
  int count;
};

__global__ void write_inputs_late_kernel(LateCopies copies, const volatile int* gate,
                                         int64_t spin_steps, int* sink) {
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
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
#pragma unroll  // constant indices: the parameters stay in the parameter space
  for (int i = 0; i < kMaxLateCopies; ++i) {
    if (i >= copies.count) break;
    for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < copies.copy[i].count;
         e += stride)
      copies.copy[i].input[e] = copies.copy[i].saved[e];
  }
}

}  // namespace

LateInputWriter::LateInputWriter() {
  int* host = nullptr;  // [0]: the gate, [1]: where the writer's spin stores nothing, in effect
  CUDA_CHECK(cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped));
  host[0] = 1;
  gate_ = host;
  CUDA_CHECK(cudaHostGetDevicePointer(&device_gate_, host, 0));
}

LateInputWriter::~LateInputWriter() {
  if (!gate_) return;
  open_gate();
  // A writer still enqueued reads the gate until it ends: free the memory after it.
  cudaDeviceSynchronize();
  cudaFreeHost(const_cast<int*>(gate_));
}

void LateInputWriter::enqueue(const LateCopy* copies, int count, cudaStream_t stream) {
  if (count < 0 || count > kMaxLateCopies)
    throw std::invalid_argument("LateInputWriter: at most 4 inputs");
  LateCopies all{};
  for (int i = 0; i < count; ++i) all.copy[i] = copies[i];
  all.count = count;
  // A few blocks, so that most SMs are free for the kernel behind from its start.
  int device = 0, sm_count = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  const int blocks = sm_count / 8 > 0 ? sm_count / 8 : 1;
  *gate_ = 0;
  __sync_synchronize();
  write_inputs_late_kernel<<<blocks, 256, 0, stream>>>(all, device_gate_, kLateInputsSpinSteps,
                                                       device_gate_ + 1);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) open_gate();
  CUDA_CHECK(status);
}

void LateInputWriter::open_gate() {
  __sync_synchronize();
  *gate_ = 1;
  __sync_synchronize();
}

}  // namespace gemm
