#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "common/gemm.hpp"

namespace gemm {

// Fills `count` bf16 values drawn uniformly from [-1, 1] with cuRAND's Philox generator.
// The same seed gives the same values on every run and every GPU. Never zeros: zeros hide
// unwritten outputs and wrong indexing, and even run faster than real data.
void fill_uniform(bf16* data, size_t count, uint64_t seed, cudaStream_t stream);

}  // namespace gemm
