#include "common/tensor_map.hpp"

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000

#include <cstdio>
#include <stdexcept>

#include "common/cuda_check.hpp"
#include "common/driver_entry_point.hpp"

namespace gemm {
namespace {

constexpr int64_t kMaxGlobalDim = 4294967295;  // 2^32 - 1
constexpr int kMaxBoxDim = 256;

// The bytes of one row that a swizzle mode permutes 16-byte chunks within; 0 for no swizzle.
// The inner side of a box may not be wider than this.
int swizzle_span_bytes(CUtensorMapSwizzle swizzle) {
  switch (swizzle) {
    case CU_TENSOR_MAP_SWIZZLE_NONE: return 0;
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    default: return 128;  // CU_TENSOR_MAP_SWIZZLE_128B and its _ATOM_ variants
  }
}

const char* swizzle_name(CUtensorMapSwizzle swizzle) {
  switch (swizzle) {
    case CU_TENSOR_MAP_SWIZZLE_NONE: return "none";
    case CU_TENSOR_MAP_SWIZZLE_32B: return "32B";
    case CU_TENSOR_MAP_SWIZZLE_64B: return "64B";
    case CU_TENSOR_MAP_SWIZZLE_128B: return "128B";
    default: return "128B (atom variant)";
  }
}

struct ElementFacts {
  const char* name;
  int64_t bytes;
  CUtensorMapDataType data_type;
};
ElementFacts facts_of(MapElement element) {
  switch (element) {
    case MapElement::e4m3: return {"e4m3", 1, CU_TENSOR_MAP_DATA_TYPE_UINT8};
    case MapElement::fp32: return {"fp32", 4, CU_TENSOR_MAP_DATA_TYPE_FLOAT32};
    default: return {"bf16", 2, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16};
  }
}

[[noreturn]] void reject(const std::string& rule) {
  throw std::invalid_argument("tensor map: " + rule);
}

// cuTensorMapEncodeTiled, a driver function (common/driver_entry_point.hpp). Looked up once per
// process: lessons build their tensor maps at every launch.
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled_function() {
  static const auto function = driver_entry_point<PFN_cuTensorMapEncodeTiled_v12000>(
      "cuTensorMapEncodeTiled", "TMA needs driver 12.0 or newer");
  return function;
}

}  // namespace

CUtensorMapSwizzle swizzle_of_row_bytes(int row_bytes) {
  switch (row_bytes) {
    case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
    case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
  }
  throw std::invalid_argument("no TMA swizzle spans rows of " + std::to_string(row_bytes) +
                              " bytes (128, 64 or 32)");
}

TensorMapArgs kmajor_tile_map_args(int64_t rows, int64_t k, int box_rows, int box_k,
                                   CUtensorMapSwizzle swizzle) {
  return kmajor_tile_map_args(MapElement::bf16, rows, k, box_rows, box_k, swizzle);
}

TensorMapArgs kmajor_tile_map_args(MapElement element, int64_t rows, int64_t k, int box_rows,
                                   int box_k, CUtensorMapSwizzle swizzle) {
  const ElementFacts facts = facts_of(element);
  const struct {
    const char* name;
    int64_t value;
  } dims[] = {{"rows", rows}, {"K", k}};
  for (const auto& dim : dims) {
    const std::string value = std::to_string(dim.value);
    if (dim.value < 1) reject(std::string(dim.name) + " = " + value + " must be at least 1");
    if (dim.value > kMaxGlobalDim)
      reject(std::string(dim.name) + " = " + value + " is larger than TMA's 2^32 - 1 elements");
  }
  // The stride is at most (2^32 - 1) * 2 bytes, far below the driver's 2^40 limit.
  const int64_t row_bytes = k * facts.bytes;
  const std::string per_16_bytes = std::to_string(16 / facts.bytes);
  if (row_bytes % 16 != 0)
    reject("a row of K = " + std::to_string(k) + " " + facts.name + " is " +
           std::to_string(row_bytes) + " bytes, not a multiple of 16 bytes as TMA needs (K % " +
           per_16_bytes + " == 0)");

  const struct {
    const char* name;
    int value;
  } box[] = {{"box rows", box_rows}, {"box K", box_k}};
  for (const auto& dim : box)
    if (dim.value < 1 || dim.value > kMaxBoxDim)
      reject(std::string(dim.name) + " = " + std::to_string(dim.value) +
             " is outside TMA's box size range 1..256");
  const int box_k_bytes = box_k * int(facts.bytes);
  if (box_k_bytes % 16 != 0)
    reject("box K = " + std::to_string(box_k) + " is " + std::to_string(box_k_bytes) +
           " bytes, not a multiple of 16 bytes as TMA needs (box K % " + per_16_bytes + " == 0)");
  const int span = swizzle_span_bytes(swizzle);
  if (span != 0 && box_k_bytes > span)
    reject("box K = " + std::to_string(box_k) + " is " + std::to_string(box_k_bytes) +
           " bytes, wider than the " + std::to_string(span) + "-byte span of the " +
           swizzle_name(swizzle) + " swizzle (at most " + std::to_string(span / facts.bytes) +
           " " + facts.name + ")");

  TensorMapArgs args;
  args.data_type = facts.data_type;
  args.global_dims = {cuuint64_t(k), cuuint64_t(rows)};
  args.global_strides = {cuuint64_t(row_bytes)};
  args.box_dims = {cuuint32_t(box_k), cuuint32_t(box_rows)};
  args.swizzle = swizzle;
  return args;
}

std::string to_string(const TensorMapArgs& args) {
  return "globalDim = {" + std::to_string(args.global_dims[0]) + ", " +
         std::to_string(args.global_dims[1]) + "}, globalStrides = {" +
         std::to_string(args.global_strides[0]) + "} bytes, boxDim = {" +
         std::to_string(args.box_dims[0]) + ", " + std::to_string(args.box_dims[1]) +
         "}, swizzle = " + swizzle_name(args.swizzle);
}

CUtensorMap make_tensor_map(const void* global_address, const TensorMapArgs& args) {
  if (reinterpret_cast<uintptr_t>(global_address) % 16 != 0) {
    char address[32];
    std::snprintf(address, sizeof(address), "%p", global_address);
    throw std::invalid_argument(std::string("tensor map: the global address ") + address +
                                " is not 16-byte aligned, as TMA needs");
  }

  const PFN_cuTensorMapEncodeTiled_v12000 encode_tiled = encode_tiled_function();
  CUtensorMap map{};
  const CUresult result = encode_tiled(
      &map, args.data_type, cuuint32_t(args.global_dims.size()), const_cast<void*>(global_address),
      args.global_dims.data(), args.global_strides.data(), args.box_dims.data(),
      args.element_strides.data(), args.interleave, args.swizzle, args.l2_promotion, args.oob_fill);
  if (result != CUDA_SUCCESS)
    throw_cuda_error("cuTensorMapEncodeTiled", "CUDA driver error " + std::to_string(int(result)) +
                                                   " for " + to_string(args),
                     __FILE__, __LINE__);
  return map;
}

}  // namespace gemm
