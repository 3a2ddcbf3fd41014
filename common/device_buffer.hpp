#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"

namespace gemm {

// Owns `count` elements of T in device memory; frees them when it goes out of scope.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) { resize(count); }
  ~DeviceBuffer() { release(); }

  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }

  // Drops the old contents. Reallocates only when the size changes.
  void resize(size_t count) {
    if (count == count_) return;
    release();
    if (count > 0) CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    count_ = count;
  }

  T* get() const { return data_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  void release() {
    if (data_) cudaFree(data_);  // not checked: a destructor must not throw
    data_ = nullptr;
    count_ = 0;
  }

  T* data_ = nullptr;
  size_t count_ = 0;
};

// `count` elements of T from device memory, once the stream's work is done (it may still be
// writing them).
template <class T>
std::vector<T> download(const T* data, size_t count, cudaStream_t stream) {
  std::vector<T> values(count);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (count > 0)
    CUDA_CHECK(cudaMemcpy(values.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost));
  return values;
}

}  // namespace gemm
