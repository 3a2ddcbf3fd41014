#pragma once
// The course's named lists of problem shapes (M x N x K), for `make bench`, `make sweep` and the
// report of lesson 16's cost model; `--shapes standard,workloads,held_out` names them on a command
// line.

#include <string>
#include <vector>

#include "common/gemm.hpp"

namespace gemm {

// The standard sweep: squares, a short and a long K, a wide N and a ragged shape; then the
// wave-quantized shapes, whose count of 128 x 256 tiles lands just past a multiple of the H100's
// 132 SMs (4224^3: 561 tiles, 4.25 waves), where Stream-K (lesson 14) matters.
inline const std::vector<GemmProblem>& standard_sweep() {
  static const std::vector<GemmProblem> shapes = {
      {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
      {6144, 6144, 6144}, {8192, 8192, 8192}, {8192, 8192, 1024},
      {1024, 1024, 8192}, {4096, 14336, 4096}, {3000, 5000, 4000},
      {4224, 4224, 4224}, {2304, 4352, 8192}, {1024, 1024, 16384}, {512, 8192, 8192},
  };
  return shapes;
}

// The workload set (lesson 16): the linear layers of two open transformers, at 512, 2048 and 8192
// tokens (M: prefill and training batches), then at 16, 32, 64, 128 and 256 tokens (the decode
// rows: a batch of requests generating one token each). Llama 3.1 8B: d_model 4096, d_ff 14336, 32 query and 8 key-value heads of 128, so
// QKV 6144 x 4096, O 4096 x 4096, gate and up together 28672 x 4096, down 4096 x 14336 (N x K).
// Llama 3.1 70B: d_model 8192, d_ff 28672, 64 and 8 heads: QKV 10240 x 8192, O 8192 x 8192,
// gate-up 57344 x 8192, down 8192 x 28672.
inline const std::vector<GemmProblem>& workload_set() {
  static const std::vector<GemmProblem> shapes = [] {
    const int64_t layers[][2] = {{6144, 4096},   {4096, 4096},  {28672, 4096}, {4096, 14336},
                                 {10240, 8192},  {8192, 8192},  {57344, 8192}, {8192, 28672}};
    std::vector<GemmProblem> list;
    for (int64_t tokens : {512, 2048, 8192, 16, 32, 64, 128, 256})
      for (const auto& layer : layers) list.push_back({tokens, layer[0], layer[1]});
    return list;
  }();
  return shapes;
}

// A second held-out set for lesson 16's cost model, which no cost is fitted on: squares between
// the standard sweep's 1024^3 and 4096^3, where the count of tiles against the 132 SMs decides
// (1536^3 is 132 tiles of 128 x 144, one full wave), and Llama 3.1 8B's layers at 1024 tokens.
inline const std::vector<GemmProblem>& held_out_set() {
  static const std::vector<GemmProblem> shapes = {
      {1280, 1280, 1280}, {1536, 1536, 1536}, {1792, 1792, 1792}, {2560, 2560, 2560},
      {3072, 3072, 3072}, {3584, 3584, 3584}, {1024, 6144, 4096}, {1024, 4096, 4096},
      {1024, 28672, 4096}, {1024, 4096, 14336},
  };
  return shapes;
}

// The list called `name` ("standard", "workloads" or "held_out"), or nullptr.
inline const std::vector<GemmProblem>* named_shape_set(const std::string& name) {
  if (name == "standard") return &standard_sweep();
  if (name == "workloads") return &workload_set();
  if (name == "held_out") return &held_out_set();
  return nullptr;
}

}  // namespace gemm
