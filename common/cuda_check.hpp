#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <curand.h>

namespace gemm {

// Every failed CUDA, cuBLAS, cuRAND or driver call becomes one of these, carrying one line:
// which call failed, why, and where ("cudaMalloc(&ptr, bytes) failed: out of memory (runner.cu:42)").
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(const char* call, const std::string& reason, const char* file,
                                   int line);

const char* curand_status_string(curandStatus_t status);

// Why this process has no CUDA GPU to run on ("no CUDA GPU found", with the runtime's reason when
// it gave one), or nothing when it sees at least one. Every program of the course asks first, so
// that a machine without a GPU gets one line and exit code 2 (kExitNoGpu), never a crash.
std::optional<std::string> missing_gpu();

inline void check_status(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(call, cudaGetErrorString(status), file, line);
}
inline void check_status(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw_cuda_error(call, cublasGetStatusString(status), file, line);
}
inline void check_status(curandStatus_t status, const char* call, const char* file, int line) {
  if (status != CURAND_STATUS_SUCCESS)
    throw_cuda_error(call, curand_status_string(status), file, line);
}
inline void check_status(CUresult status, const char* call, const char* file, int line) {
  if (status != CUDA_SUCCESS)
    throw_cuda_error(call, "CUDA driver error " + std::to_string(int(status)), file, line);
}

}  // namespace gemm

// CUDA_CHECK(cudaMalloc(&ptr, bytes)): throws gemm::CudaError if the call did not succeed.
// A macro only so that the message can quote the call and its file:line.
#define CUDA_CHECK(call) ::gemm::check_status((call), #call, __FILE__, __LINE__)
