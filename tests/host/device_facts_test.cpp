#include <gtest/gtest.h>

#include <stdexcept>

#include "common/device_facts.hpp"

using gemm::dense_bf16_peak_flops_per_second;
using gemm::ridge_point_flops_per_byte;
using gemm::theoretical_dram_bytes_per_second;

TEST(DeviceFacts, DramBandwidthCountsTwoTransfersPerReportedClock) {
  // Our H200 reports a 3201 MHz memory clock on a 6016-bit bus (make device, 2026-11-27): two
  // transfers per clock give 4.814 TB/s, NVIDIA's 4.8 TB/s; one or four would give half or double.
  const double bandwidth = theoretical_dram_bytes_per_second(3201000, 6016);
  EXPECT_DOUBLE_EQ(bandwidth, 2.0 * 3201e6 * 6016 / 8);
  EXPECT_NEAR(bandwidth, 4.8e12, 0.02e12);
}

TEST(DeviceFacts, DramBandwidthIsWhatTheClockGivesNotADatasheetFigure) {
  // On a 6144-bit bus, 4.8 TB/s needs exactly 3125 MHz. Any other reported clock gives its own
  // figure, in proportion: nothing rounds it toward a datasheet's.
  EXPECT_DOUBLE_EQ(theoretical_dram_bytes_per_second(3125000, 6144), 4.8e12);
  EXPECT_DOUBLE_EQ(theoretical_dram_bytes_per_second(3250000, 6144), 4.8e12 * 3250.0 / 3125.0);
}

TEST(DeviceFacts, DenseBf16PeakIsSmsTimes4096FlopsTimesTheClock) {
  // NVIDIA's figure uses 1.83 GHz: 989.4 TFLOP/s; the 1.98 GHz maximum SM clock gives 1070.5.
  EXPECT_DOUBLE_EQ(dense_bf16_peak_flops_per_second(132, 1830000), 132.0 * 4096 * 1.83e9);
  EXPECT_NEAR(dense_bf16_peak_flops_per_second(132, 1830000), 989.4e12, 0.05e12);
  EXPECT_NEAR(dense_bf16_peak_flops_per_second(132, 1980000), 1070.5e12, 0.05e12);
}

TEST(DeviceFacts, RidgePointIsPeakOverBandwidth) {
  // docs/hardware.md, section 7: the H100 by its datasheet bandwidth, then the H200 by its own.
  EXPECT_NEAR(ridge_point_flops_per_byte(989.4e12, 3.35e12), 295.3, 0.05);
  EXPECT_NEAR(ridge_point_flops_per_byte(989.4e12, 4.8e12), 206.1, 0.05);
  // A bandwidth measured below the datasheet's puts the ridge higher.
  EXPECT_GT(ridge_point_flops_per_byte(989.4e12, 4.5e12),
            ridge_point_flops_per_byte(989.4e12, 4.8e12));
}

TEST(DeviceFacts, RidgePointNeedsAPositivePeakAndBandwidth) {
  EXPECT_THROW(ridge_point_flops_per_byte(989.4e12, 0.0), std::invalid_argument);
  EXPECT_THROW(ridge_point_flops_per_byte(0.0, 3.35e12), std::invalid_argument);
  EXPECT_THROW(ridge_point_flops_per_byte(989.4e12, -1.0), std::invalid_argument);
}
