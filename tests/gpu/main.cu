// Entry point of the GPU tests. Without a GPU: one line and exit code 77, which ctest reports as
// "skipped" (SKIP_RETURN_CODE). With REQUIRE_GPU=1 (the GPU machine): a missing GPU is a failure.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "tests/gpu/gpu_test_support.hpp"

bool gpu_test_support::gpu_required() {
  const char* value = std::getenv("REQUIRE_GPU");
  return value != nullptr && std::string(value) == "1";
}

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (const auto missing = gemm::missing_gpu()) {
    if (gpu_test_support::gpu_required()) {
      std::printf("FAILED: REQUIRE_GPU=1 but %s\n", missing->c_str());
      return 1;
    }
    std::printf("SKIPPED: %s; set REQUIRE_GPU=1 to fail instead\n", missing->c_str());
    return 77;
  }
  return RUN_ALL_TESTS();
}
