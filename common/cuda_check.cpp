#include "common/cuda_check.hpp"

#include <cstring>

namespace gemm {

void throw_cuda_error(const char* call, const std::string& reason, const char* file, int line) {
  // Only the file's name: the message should read the same on every machine.
  const char* slash = std::strrchr(file, '/');
  const char* name = slash ? slash + 1 : file;
  throw CudaError(std::string(call) + " failed: " + reason + " (" + name + ":" +
                  std::to_string(line) + ")");
}

std::optional<std::string> missing_gpu() {
  int device_count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&device_count); status != cudaSuccess)
    return std::string("no CUDA GPU found (cudaGetDeviceCount: ") + cudaGetErrorString(status) + ")";
  if (device_count == 0) return std::string("no CUDA GPU found");
  return std::nullopt;
}

const char* curand_status_string(curandStatus_t status) {
  switch (status) {
    case CURAND_STATUS_ALLOCATION_FAILED: return "cuRAND could not allocate memory";
    case CURAND_STATUS_LAUNCH_FAILURE: return "cuRAND kernel launch failed";
    case CURAND_STATUS_INITIALIZATION_FAILED: return "cuRAND initialization failed";
    case CURAND_STATUS_ARCH_MISMATCH: return "cuRAND does not support this GPU";
    default: return "cuRAND error";
  }
}

}  // namespace gemm
