// The per-device cache of the launch plumbing (common/per_device.hpp): one answer per device.
#include <stdexcept>

#include <gtest/gtest.h>

#include "common/per_device.hpp"

namespace {

TEST(PerDevice, AsksOncePerDevice) {
  gemm::PerDevice<int> clusters;
  int asked = 0;
  // Device 0 holds 66 clusters, device 1 (another GPU of the same process) 60.
  EXPECT_EQ(clusters.get(0, [&] { ++asked; return 66; }), 66);
  EXPECT_EQ(clusters.get(0, [&] { ++asked; return -1; }), 66);  // kept: not asked again
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(clusters.get(1, [&] { ++asked; return 60; }), 60);  // a new device is asked
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(clusters.get(0, [&] { ++asked; return -1; }), 66);
  EXPECT_EQ(clusters.get(1, [&] { ++asked; return -1; }), 60);
  EXPECT_EQ(asked, 2);
}

TEST(PerDevice, KeepsNothingWhenTheQuestionFails) {
  gemm::PerDevice<int> clusters;
  EXPECT_THROW(clusters.get(0, []() -> int { throw std::runtime_error("no cluster fits"); }),
               std::runtime_error);
  EXPECT_EQ(clusters.get(0, [] { return 7; }), 7);
}

}  // namespace
