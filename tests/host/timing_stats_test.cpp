#include <gtest/gtest.h>

#include <stdexcept>

#include "common/harness/timing.hpp"

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

// ---- The paired protocol's statistics --------------------------------------------------------

using gemm::planned_pairs;
using gemm::summarize_pairs;
using gemm::TimingOptions;

TEST(PairedTiming, RatioIsTheMedianOfThePerPairRatiosNotTheRatioOfMedians) {
  // The clock falls during the run: both sides slow down together, pair by pair. The lesson is
  // always 10% faster than the reference in its own pair.
  const std::vector<double> reference = {1.00, 1.10, 1.30, 1.32, 2.00};
  std::vector<double> lesson;
  for (double r : reference) lesson.push_back(r / 1.1);
  const auto timing = summarize_pairs(lesson, reference);
  EXPECT_NEAR(timing.ratio, 1.1, 1e-12);
  EXPECT_NEAR(timing.ratio_min, 1.1, 1e-12);
  EXPECT_NEAR(timing.ratio_max, 1.1, 1e-12);
  EXPECT_EQ(timing.pairs, 5);
  EXPECT_EQ(timing.lesson.median_ms, 1.30 / 1.1);
  EXPECT_EQ(timing.reference.median_ms, 1.30);
}

TEST(PairedTiming, AnOutlierPairDoesNotMoveTheRatio) {
  // One pair where the lesson hit a slow moment: the median of the ratios ignores it.
  const auto timing = summarize_pairs({1.0, 1.0, 5.0, 1.0, 1.0}, {2.0, 2.0, 2.0, 2.0, 2.0});
  EXPECT_EQ(timing.ratio, 2.0);
  EXPECT_EQ(timing.ratio_min, 0.4);
  EXPECT_EQ(timing.ratio_max, 2.0);
}

TEST(PairedTiming, MismatchedOrEmptySidesAreAnError) {
  EXPECT_THROW(summarize_pairs({}, {}), std::invalid_argument);
  EXPECT_THROW(summarize_pairs({1.0, 2.0}, {1.0}), std::invalid_argument);
}

TEST(PairedTiming, TimesAtLeastTheRequestedPairs) {
  TimingOptions options;
  options.pairs = 30;
  options.min_timed_seconds = 0.2;
  // 10 ms per lesson run: 30 pairs are 0.3 s of lesson time, more than 0.2 s.
  EXPECT_EQ(planned_pairs(options, 20.0, 10.0), 30);
}

TEST(PairedTiming, SmallShapesGetMorePairsUpToTheCap) {
  TimingOptions options;
  options.pairs = 30;
  options.min_timed_seconds = 0.2;
  options.max_pairs = 500;
  EXPECT_EQ(planned_pairs(options, 2.0, 1.0), 200);     // 200 x 1 ms = 0.2 s
  EXPECT_EQ(planned_pairs(options, 0.02, 0.01), 500);   // would need 20000: capped
}

TEST(PairedTiming, TheBenchmarkBudgetLowersThePairsButNotBelowThree) {
  TimingOptions options;
  options.pairs = 30;
  options.max_total_seconds = 2.0;
  EXPECT_EQ(planned_pairs(options, 100.0, 90.0), 20);    // 2 s / 100 ms per pair
  EXPECT_EQ(planned_pairs(options, 5000.0, 4000.0), 3);  // lesson 01 at 8192^3: still 3 pairs
}

// ---- Clock reports -----------------------------------------------------------------------------

TEST(ClockReport, SummarizesMedianExtremesAndEveryReasonSeen) {
  const std::vector<gemm::ClockSample> samples = {
      {1980, 350, 0x0}, {1755, 699, 0x4}, {1500, 700, 0x4 | 0x8}, {1650, 690, 0x4}};
  const gemm::ClockReport report = gemm::summarize_clock_samples(samples);
  EXPECT_TRUE(report.available);
  EXPECT_EQ(report.samples, 4);
  EXPECT_EQ(report.sm_mhz_median, (1650 + 1755) / 2.0);
  EXPECT_EQ(report.sm_mhz_min, 1500);
  EXPECT_EQ(report.sm_mhz_max, 1980);
  EXPECT_EQ(report.power_w_peak, 700);
  EXPECT_EQ(report.throttle_reasons, 0xCu);
  EXPECT_EQ(gemm::throttle_reason_names(report.throttle_reasons), "sw_power_cap+hw_slowdown");
  EXPECT_EQ(report.summary(),
            "SM 1702 MHz median (1500-1980), power peak 700 W, throttle: sw_power_cap+hw_slowdown");
}

TEST(ClockReport, NoSamplesMeansNotAvailable) {
  const gemm::ClockReport report = gemm::summarize_clock_samples({});
  EXPECT_FALSE(report.available);
  EXPECT_EQ(report.summary(), "clock: n/a (NVML not available)");
  EXPECT_EQ(gemm::throttle_reason_names(0), "none");
  // Idle and application-clock bits do not slow a running kernel: not reported.
  EXPECT_EQ(gemm::throttle_reason_names(0x1 | 0x2), "none");
}
