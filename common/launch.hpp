#pragma once
// Host-side launch plumbing shared by the lessons.

#include <string>
#include <utility>

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "common/per_device.hpp"

namespace gemm {

// The device the calling host thread launches on (cudaSetDevice).
inline int current_device() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

// A block may use more than 48 KB of dynamic shared memory only if its kernel was allowed to
// beforehand (cudaFuncAttributeMaxDynamicSharedMemorySize). The attribute is set on the current
// device and stays set for the life of the process, so this asks once per kernel and device (the
// static below is one per Kernel, keyed by device), and checks: asking for more than the GPU has
// fails here, with the call and the reason, not at the launch.
// Call it as allow_dynamic_shared_memory<gemm_kernel<Tile>>(bytes).
template <auto Kernel>
void allow_dynamic_shared_memory(int bytes) {
  static PerDevice<bool> allowed;
  allowed.get(current_device(), [bytes] {
    CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return true;
  });
}

// How many blocks of `Kernel` can be resident on the GPU at once, with `threads` threads and
// `dynamic_shared_bytes` of dynamic shared memory per block: the SM count times the blocks per
// SM that the occupancy calculator allows. A persistent grid launches at most this many, so that
// every block is running from the start. Asked once per kernel (each kernel instance has one
// configuration) and device; throws CudaError if not even one block fits.
template <auto Kernel>
int resident_blocks(int threads, int dynamic_shared_bytes) {
  static PerDevice<int> blocks;
  const int device = current_device();
  return blocks.get(device, [device, threads, dynamic_shared_bytes] {
    int sm_count = 0, per_sm = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, threads,
                                                             size_t(dynamic_shared_bytes)));
    if (per_sm == 0)
      throw_cuda_error("cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                       "not one block of " + std::to_string(threads) + " threads with " +
                           std::to_string(dynamic_shared_bytes) + " bytes of shared memory fits on an SM",
                       __FILE__, __LINE__);
    return sm_count * per_sm;
  });
}

// How many clusters of `cluster_size` CTAs of `Kernel` (along x) can be resident at once
// (cudaOccupancyMaxActiveClusters): clusters need their CTAs on SMs of one GPC at the same time,
// so this can be less than the SM count divided by the cluster size. Asked once per kernel and
// device; throws CudaError with the reason if not even one cluster fits.
template <auto Kernel>
int resident_clusters(int cluster_size, int threads, int dynamic_shared_bytes) {
  static PerDevice<int> clusters;
  return clusters.get(current_device(), [cluster_size, threads, dynamic_shared_bytes] {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(unsigned(cluster_size));
    config.blockDim = dim3(unsigned(threads));
    config.dynamicSmemBytes = size_t(dynamic_shared_bytes);
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = unsigned(cluster_size);
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    int count = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&count, Kernel, &config));
    if (count == 0)
      throw_cuda_error("cudaOccupancyMaxActiveClusters",
                       "not one cluster of " + std::to_string(cluster_size) + " blocks of " +
                           std::to_string(threads) + " threads with " +
                           std::to_string(dynamic_shared_bytes) +
                           " bytes of shared memory each fits on this GPU",
                       __FILE__, __LINE__);
    return count;
  });
}

// Whether every cluster of a launch must be running at the same time.
enum class Residency {
  any,          // the hardware starts clusters as SMs free up
  all_at_once,  // a cooperative launch: all clusters resident together, or the launch waits
                // until they can be (other work on the GPU drains first), or it fails at once
                // (cudaErrorCooperativeLaunchTooLarge) if the grid can never fit
};

// Whether Residency::all_at_once launches cooperatively (the default). Nsight Compute cannot
// profile a cooperative launch (ncu 2025.3 on the H100: the profiled launch fails with
// LaunchFailed, in kernel and in application replay), so a lesson executable's --profile mode,
// where the kernel runs alone on the GPU, turns it off: with nothing else running, every cluster of
// a grid sized to fit the GPU (resident_clusters) is resident anyway.
inline bool& cooperative_launches() {
  static bool enabled = true;
  return enabled;
}

// Launches `kernel` on a grid of `grid` blocks (along x) in clusters of `cluster_size`, through
// cudaLaunchKernelEx (the <<<>>> syntax cannot ask for clusters). `grid` must be a multiple of
// the cluster size. Throws CudaError if the launch is refused. A grid whose clusters wait for each
// other (Stream-K, lesson 14) asks for Residency::all_at_once: a cluster spinning on another that
// is not running yet would otherwise wait for SMs that it and its peers hold.
//
// `after_prerequisite` (lesson 17): the launch is a dependent of the kernel ahead of it in the
// stream (programmatic dependent launch, cudaLaunchAttributeProgrammaticStreamSerialization):
// `kernel` may start once every block of that kernel has executed griddepcontrol.launch_dependents
// or exited, before it has finished. So the kernel must execute griddepcontrol.wait
// (common/ptx/grid_dependency.hpp) before it reads anything the kernel ahead wrote, or writes
// anything that kernel reads. After anything else in the stream (a copy, an event, a kernel that
// never signals), it starts as in stream order.
template <class... KernelParameters, class... Arguments>
void launch_clusters(void (*kernel)(KernelParameters...), unsigned grid, int cluster_size,
                     int threads, int dynamic_shared_bytes, Residency residency,
                     bool after_prerequisite, cudaStream_t stream, Arguments&&... arguments) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(unsigned(threads));
  config.dynamicSmemBytes = size_t(dynamic_shared_bytes);
  config.stream = stream;
  cudaLaunchAttribute attributes[3]{};
  attributes[0].id = cudaLaunchAttributeClusterDimension;
  attributes[0].val.clusterDim.x = unsigned(cluster_size);
  attributes[0].val.clusterDim.y = 1;
  attributes[0].val.clusterDim.z = 1;
  // A dependent launch is never cooperative: a cooperative grid starts only when all of it fits,
  // that is after the kernel ahead has left the SMs, which is what the dependent launch is there
  // to avoid. Its clusters still all run at once in the end: the grid fits the GPU
  // (resident_clusters), and what holds SMs ahead of it finishes without waiting for it.
  attributes[1].id = cudaLaunchAttributeCooperative;
  attributes[1].val.cooperative =
      residency == Residency::all_at_once && cooperative_launches() && !after_prerequisite ? 1 : 0;
  attributes[2].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[2].val.programmaticStreamSerializationAllowed = after_prerequisite ? 1 : 0;
  config.attrs = attributes;
  config.numAttrs = 3;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Arguments>(arguments)...));
}

// The launch of lessons 12-16: in stream order, after everything ahead of it has finished.
template <class... KernelParameters, class... Arguments>
void launch_with_clusters(void (*kernel)(KernelParameters...), unsigned grid, int cluster_size,
                          int threads, int dynamic_shared_bytes, Residency residency,
                          cudaStream_t stream, Arguments&&... arguments) {
  launch_clusters(kernel, grid, cluster_size, threads, dynamic_shared_bytes, residency,
                  /*after_prerequisite=*/false, stream, std::forward<Arguments>(arguments)...);
}

}  // namespace gemm
