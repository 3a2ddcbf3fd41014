#pragma once
// A function of the CUDA driver, found through the runtime (cudaGetDriverEntryPointByVersion), so
// that nothing links libcuda: the tensor maps' encoder (common/tensor_map.cpp) and the streams'
// flag operations (common/multi_gpu/stream_flags.hpp). It asks for the ABI of CUDA 12.0, which
// CUDA 13 still serves (it removed the unversioned typedefs, such as PFN_cuTensorMapEncodeTiled).

#include <string>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"

namespace gemm {

// The driver's `name` as a `Function` (a PFN_..._v12000-style typedef of cudaTypedefs.h). Throws
// CudaError, naming the function and `needs` (what it takes to have it), where the driver lacks it.
// Callers look it up once per process (a function-local static).
template <class Function>
Function driver_entry_point(const char* name, const char* needs) {
  void* found = nullptr;
  cudaDriverEntryPointQueryResult query_result{};
  CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &found, 12000, cudaEnableDefault,
                                              &query_result));
  if (query_result != cudaDriverEntryPointSuccess || found == nullptr)
    throw_cuda_error("cudaGetDriverEntryPointByVersion",
                     std::string("the CUDA driver does not provide ") + name + " (query result " +
                         std::to_string(int(query_result)) + "); " + needs,
                     __FILE__, __LINE__);
  return reinterpret_cast<Function>(found);
}

}  // namespace gemm
