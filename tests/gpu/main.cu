// Entry point of the GPU tests. Without a GPU: one line and exit code 77, which ctest reports as
// "skipped" (SKIP_RETURN_CODE). With REQUIRE_GPU=1 (the GPU machine): a missing GPU is a failure.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <cuda_runtime_api.h>

#include "tests/gpu/gpu_test_support.hpp"

bool gpu_test_support::gpu_required() {
  const char* value = std::getenv("REQUIRE_GPU");
  return value != nullptr && std::string(value) == "1";
}

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    const std::string reason = status != cudaSuccess ? cudaGetErrorString(status) : "0 devices";
    if (gpu_test_support::gpu_required()) {
      std::printf("FAILED: REQUIRE_GPU=1 but no CUDA GPU was found (%s)\n", reason.c_str());
      return 1;
    }
    std::printf("SKIPPED: no CUDA GPU found (%s); set REQUIRE_GPU=1 to fail instead\n", reason.c_str());
    return 77;
  }
  return RUN_ALL_TESTS();
}
