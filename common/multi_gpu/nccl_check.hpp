#pragma once
// NCCL_CHECK(ncclAllReduce(...)): a failed NCCL call becomes a gemm::CudaError carrying one line
// (the call, NCCL's reason, file:line), as CUDA_CHECK does for CUDA, cuBLAS and cuRAND.

#include <nccl.h>

#include <string>

#include "common/cuda_check.hpp"

namespace gemm {

inline void check_nccl(ncclResult_t status, const char* call, const char* file, int line) {
  if (status != ncclSuccess) throw_cuda_error(call, ncclGetErrorString(status), file, line);
}

}  // namespace gemm

// A macro only so that the message can quote the call and its file:line (as CUDA_CHECK).
#define NCCL_CHECK(call) ::gemm::check_nccl((call), #call, __FILE__, __LINE__)
