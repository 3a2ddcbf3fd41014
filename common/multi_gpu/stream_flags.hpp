#pragma once
// Flags that a stream writes and waits for by itself, with no kernel: the CUDA driver's stream
// memory operations (cuStreamWriteValue32, cuStreamWaitValue32), which the GPU's front end carries
// out in stream order. A stream of copies (the copy engines) can tell a kernel running on another
// stream that a copy has landed, tell another GPU that its pushes are done, or wait for another
// GPU's flag, while every SM is held by a persistent kernel: a kernel that did the same would
// wait for an SM until that kernel ended, and a kernel that waits for the flag would never end.
// Both functions are found through the runtime, as the tensor maps' encoder is
// (common/driver_entry_point.hpp), so nothing links libcuda.

#include <cstdint>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/driver_entry_point.hpp"

namespace gemm {

// Once everything before it in `stream` has completed, writes `value` into `flag` (this GPU's
// memory, or a peer's mapped into this process). The driver fences before the write, so whoever
// reads the value with acquire semantics (ptx::load_acquire_sys, or wait_for_flag) also sees every
// write of the work before it in the stream: the rows a copy moved, for one.
inline void write_flag_after(cudaStream_t stream, uint32_t* flag, uint32_t value) {
  static const auto write = driver_entry_point<PFN_cuStreamWriteValue32_v11070>(
      "cuStreamWriteValue32", "lesson 19 needs a CUDA 12.0 driver or newer");
  CUDA_CHECK(write(CUstream(stream), CUdeviceptr(flag), value, CU_STREAM_WRITE_VALUE_DEFAULT));
}

// Holds the work after it in `stream` until `flag` holds `value` or a later one: the driver
// compares as int32_t(*flag - value) >= 0, the comparison of epochs that survives wrapping around.
inline void wait_for_flag(cudaStream_t stream, const uint32_t* flag, uint32_t value) {
  static const auto wait = driver_entry_point<PFN_cuStreamWaitValue32_v11070>(
      "cuStreamWaitValue32", "lesson 19 needs a CUDA 12.0 driver or newer");
  CUDA_CHECK(wait(CUstream(stream), CUdeviceptr(flag), value, CU_STREAM_WAIT_VALUE_GEQ));
}

}  // namespace gemm
