#pragma once
// The costs of lesson 16's cost model on the GPU at hand (common/schedule/shape_model.hpp): those
// fitted on the H100 or the H200, whichever's DRAM rate is nearest, with the DRAM rate read from
// the device (its memory clock and bus width times the share of that peak a kernel reaches). Host
// code; asked once per device.
// Taught in lesson 16: lessons/16_shape_heuristics/kernel.cuh spells it out
// (tests/tools/test_teaching_copies.py keeps the two identical).

#include <cmath>

#include "common/device_facts.hpp"
#include "common/per_device.hpp"
#include "common/schedule/shape_model.hpp"

namespace gemm::taught {

// BEGIN TEACHING COPY(costs_on_this_gpu)
inline constexpr double kDramShareReached = 0.87;
inline MachineCosts costs_on_this_gpu() {
  static gemm::PerDevice<MachineCosts> costs;
  const int device = gemm::current_device();
  return costs.get(device, [device] {
    const gemm::DeviceFacts facts = gemm::query_device_facts(device);
    const double dram_bytes_per_ns = kDramShareReached *
                                     gemm::theoretical_dram_bytes_per_second(
                                         facts.memory_clock_khz, facts.memory_bus_width_bits) /
                                     1e9;
    const bool nearer_h200 = std::abs(dram_bytes_per_ns - kH200Costs.dram_bytes_per_ns) <
                             std::abs(dram_bytes_per_ns - kH100Costs.dram_bytes_per_ns);
    MachineCosts here = nearer_h200 ? kH200Costs : kH100Costs;
    here.dram_bytes_per_ns = dram_bytes_per_ns;
    here.sms = facts.sm_count;
    return here;
  });
}
// END TEACHING COPY

}  // namespace gemm::taught
