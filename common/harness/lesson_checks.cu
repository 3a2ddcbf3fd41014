// What a lesson can run: on the GPU at hand (its compute capability and this build's targets), with
// the epilogue and the configuration a command line asks for (common/harness/runner.hpp).
#include "common/harness/runner.hpp"

#include <sstream>
#include <string>

#include "common/cuda_check.hpp"
#include "common/device_facts.hpp"
#include "common/harness/text_format.hpp"

// The CUDA architectures this build targets (CMAKE_CUDA_ARCHITECTURES), set by CMake.
#ifndef GEMM_CUDA_ARCHITECTURES
#error "GEMM_CUDA_ARCHITECTURES must be defined by the build"
#endif

namespace gemm {
namespace {

// Can code built for `arch` (an entry of CMAKE_CUDA_ARCHITECTURES such as "80", "90a" or
// "90-real") run on a GPU of compute capability major.minor? Arch-specific targets ("90a") run
// only on exactly that GPU; plain ones carry PTX that the driver compiles for newer GPUs.
bool arch_runs_on(const std::string& arch, int major, int minor) {
  if (arch.size() < 2) return false;
  const int number = std::stoi(arch.substr(0, 2));
  const int device = major * 10 + minor;
  if (arch.size() > 2 && arch[2] == 'a') return number == device;
  return number <= device;
}

}  // namespace

std::optional<std::string> unsupported_reason(const Lesson& lesson, const DeviceInfo& device) {
  const std::string gpu = device.name + " (compute capability " + std::to_string(device.major) +
                          "." + std::to_string(device.minor) + ")";
  if (lesson.min_arch == MinArch::sm90a && !(device.major == 9 && device.minor == 0))
    return "lesson " + std::to_string(lesson.id) +
           " needs a Hopper GPU with the sm_90a target (compute capability 9.0: wgmma, TMA, "
           "setmaxnreg); this GPU is " + gpu;
  if (device.major < 8)
    return "lesson " + std::to_string(lesson.id) +
           " needs compute capability 8.0 or newer (bf16 tensor cores, cp.async); this GPU is " + gpu;

  // GEMM_CUDA_ARCHITECTURES is CMAKE_CUDA_ARCHITECTURES with commas: "90a" or "80,90a".
  std::stringstream architectures(GEMM_CUDA_ARCHITECTURES);
  std::string arch;
  bool runs_here = false, has_sm90a = false;
  while (std::getline(architectures, arch, ',')) {
    runs_here = runs_here || arch_runs_on(arch, device.major, device.minor);
    has_sm90a = has_sm90a || arch.rfind("90a", 0) == 0;
  }
  const std::string rebuild = "; rebuild with -DCMAKE_CUDA_ARCHITECTURES=\"" +
                              std::to_string(device.major * 10 + device.minor) + ";90a\"";
  if (!runs_here)
    return std::string("this executable was built for CUDA architectures '") +
           GEMM_CUDA_ARCHITECTURES + "', none of which runs on " + gpu + rebuild;
  if (lesson.min_arch == MinArch::sm90a && !has_sm90a)
    return std::string("this executable was built without the 90a target that lesson ") +
           std::to_string(lesson.id) + " needs (built for '" + GEMM_CUDA_ARCHITECTURES + "')" +
           rebuild;
  return std::nullopt;
}

std::optional<std::string> epilogue_refusal(const Lesson& lesson, const EpilogueOptions& epilogue) {
  if (!epilogue.given || lesson.fused_epilogue) return std::nullopt;
  return "--alpha, --beta, --bias and --act belong to lesson 15's fused epilogue; " +
         lesson_name(lesson) + " computes the plain D = A * B^T";
}

std::optional<std::string> configuration_refusal(const Lesson& lesson, const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (lesson.configuration_count == 0)
    return "--config chooses one of the compiled configurations of lessons 16-18; " +
           lesson_name(lesson) + " has one";
  if (find_configuration(lesson, name) >= 0) return std::nullopt;
  std::string names;
  for (int i = 0; i < lesson.configuration_count; ++i)
    names += (i ? ", " : "") + std::string(lesson.configurations[i].name);
  return "no configuration '" + name + "' in " + lesson_name(lesson) + " (" + names + ")";
}

std::string describe_epilogue(const EpilogueOptions& epilogue) {
  std::string inner = "A*B^T";
  if (epilogue.alpha != 1.0f) inner = format_number("%g", epilogue.alpha) + " * " + inner;
  if (epilogue.beta != 0.0f) inner += " + " + format_number("%g", epilogue.beta) + " * C";
  if (epilogue.bias) inner += " + bias";
  if (epilogue.activation == Activation::none) return "D = " + inner;
  return std::string("D = ") + activation_name(epilogue.activation) + "(" + inner + ")";
}

DeviceInfo query_device(int ordinal) {
  CUDA_CHECK(cudaSetDevice(ordinal));
  const DeviceFacts facts = query_device_facts(ordinal);
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = facts.name;
  info.major = facts.compute_capability_major;
  info.minor = facts.compute_capability_minor;
  info.sm_count = facts.sm_count;
  info.l2_bytes = size_t(facts.l2_cache_bytes);
  return info;
}

}  // namespace gemm
