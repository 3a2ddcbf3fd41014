#pragma once

// Functions that run on both sides (tile schedules, descriptor encodings, tolerance rules) are
// marked GEMM_HOST_DEVICE so that host-only unit tests, compiled by the plain C++ compiler,
// can call the very same code the kernels use.
#if defined(__CUDACC__)
#define GEMM_HOST_DEVICE __host__ __device__
#else
#define GEMM_HOST_DEVICE
#endif
