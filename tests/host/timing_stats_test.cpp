#include <gtest/gtest.h>

#include <stdexcept>

#include "common/timing.hpp"

using gemm::summarize_samples;

TEST(TimingStats, OddCountMedianIsTheMiddleSample) {
  const auto stats = summarize_samples({5.0, 1.0, 3.0});
  EXPECT_EQ(stats.median_ms, 3.0);
  EXPECT_EQ(stats.min_ms, 1.0);
  EXPECT_EQ(stats.max_ms, 5.0);
  EXPECT_EQ(stats.samples, 3);
}

TEST(TimingStats, EvenCountMedianIsTheMeanOfTheMiddleTwo) {
  EXPECT_EQ(summarize_samples({4.0, 1.0, 2.0, 10.0}).median_ms, 3.0);
}

TEST(TimingStats, OneOutlierMovesTheMaxButNotTheMedian) {
  const auto stats = summarize_samples({1.0, 1.1, 0.9, 1.0, 50.0});
  EXPECT_EQ(stats.median_ms, 1.0);
  EXPECT_EQ(stats.max_ms, 50.0);
}

TEST(TimingStats, SingleSample) {
  const auto stats = summarize_samples({2.5});
  EXPECT_EQ(stats.median_ms, 2.5);
  EXPECT_EQ(stats.min_ms, 2.5);
  EXPECT_EQ(stats.max_ms, 2.5);
}

TEST(TimingStats, NoSamplesIsAnError) { EXPECT_THROW(summarize_samples({}), std::invalid_argument); }
