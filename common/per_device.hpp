#pragma once
// A value worked out once per CUDA device: what a kernel may use or holds on the GPU it runs on.
//
// A process may drive several GPUs (cudaSetDevice), and what the launch plumbing asks of the
// runtime (how many clusters fit, whether a kernel may use more than 48 KB of shared memory) is a
// property of the device, not of the process. So each such answer is kept per device ordinal, and
// asked again on a device that has not been asked yet. Thread-safe: several host threads may launch
// on different devices at once.

#include <map>
#include <mutex>

namespace gemm {

template <class Value>
class PerDevice {
 public:
  // The value for `device`: compute() the first time this device asks, the kept value afterwards.
  // If compute() throws, nothing is kept, and the next call asks again.
  template <class Compute>
  Value get(int device, Compute&& compute) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto known = values_.find(device);
    if (known != values_.end()) return known->second;
    const Value value = compute();
    values_.emplace(device, value);
    return value;
  }

 private:
  std::mutex mutex_;
  std::map<int, Value> values_;
};

}  // namespace gemm
