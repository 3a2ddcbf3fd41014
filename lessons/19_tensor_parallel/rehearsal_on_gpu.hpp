#pragma once
// NEW in lesson 19: the rehearsal of every rank count's copies (rehearsal.hpp) on the GPU, with the
// cudaMemcpyAsync calls the overlapped variant's copies make, between buffers of one GPU.

#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "lessons/19_tensor_parallel/rehearsal.hpp"

namespace lesson19 {

// Buffers of rows on the GPU, in the stream given; the same operations as rehearsal::HostRows.
class DeviceRows {
 public:
  using Buffer = gemm::DeviceBuffer<uint64_t>;
  explicit DeviceRows(cudaStream_t stream) : stream_(stream) {}

  Buffer allocate(int64_t rows) {
    Buffer buffer(static_cast<size_t>(rows));
    poison(buffer);
    return buffer;
  }
  // Waits: `words` may go out of scope once it returns.
  void write(Buffer& buffer, const std::vector<uint64_t>& words) {
    CUDA_CHECK(cudaMemcpyAsync(buffer.get(), words.data(), words.size() * sizeof(uint64_t),
                               cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void poison(Buffer& buffer) {
    CUDA_CHECK(cudaMemsetAsync(buffer.get(), rehearsal::kPoisonByte,
                               buffer.size() * sizeof(uint64_t), stream_));
  }
  void copy(Buffer& to, int64_t to_row, const Buffer& from, int64_t from_row, int64_t rows) {
    CUDA_CHECK(cudaMemcpyAsync(to.get() + to_row, from.get() + from_row,
                               static_cast<size_t>(rows) * sizeof(uint64_t),
                               cudaMemcpyDeviceToDevice, stream_));
  }
  // Waits for the copies before it.
  std::vector<uint64_t> read(const Buffer& buffer) {
    std::vector<uint64_t> words(buffer.size());
    CUDA_CHECK(cudaMemcpyAsync(words.data(), buffer.get(), buffer.size() * sizeof(uint64_t),
                               cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    return words;
  }

 private:
  cudaStream_t stream_;
};

// Every rank count's copies at `tokens` tokens in `chunks` chunks, rehearsed on this GPU. Waits.
inline RehearsalReport rehearse_on_gpu(int64_t tokens, int chunks, int64_t d_ff,
                                       cudaStream_t stream) {
  DeviceRows buffers(stream);
  return rehearse_exchange(tokens, chunks, d_ff, buffers);
}

}  // namespace lesson19
