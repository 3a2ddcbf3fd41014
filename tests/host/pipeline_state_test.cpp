#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/schedule/pipeline_state.hpp"

using gemm::PipelineState;

TEST(PipelineState, ConsumerStartsAtStageZeroPhaseZero) {
  const auto state = PipelineState<4>::consumer_start();
  EXPECT_EQ(state.index, 0);
  EXPECT_EQ(state.phase, 0u);
}

TEST(PipelineState, ProducerStartsOnTheOppositePhase) {
  // The producer's first wait on each (fresh, phase 0) EMPTY barrier uses parity 1: it returns
  // at once, so the first pass through the ring does not block.
  const auto producer = PipelineState<4>::producer_start();
  const auto consumer = PipelineState<4>::consumer_start();
  EXPECT_EQ(producer.index, 0);
  EXPECT_EQ(producer.phase, 1u);
  EXPECT_EQ(producer.phase, consumer.phase ^ 1u);
}

TEST(PipelineState, IndexWalksTheRingInOrder) {
  PipelineState<3> state;
  std::vector<int> indices;
  for (int i = 0; i < 8; ++i) {
    indices.push_back(state.index);
    state.advance();
  }
  EXPECT_EQ(indices, (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1}));
}

TEST(PipelineState, PhaseFlipsOnEveryWrapAndOnlyThen) {
  PipelineState<4> state;
  for (int step = 0; step < 40; ++step) {
    const int index_before = state.index;
    const uint32_t phase_before = state.phase;
    state.advance();
    const bool wrapped = state.index == 0;
    EXPECT_EQ(wrapped, index_before == 3) << "step " << step;
    EXPECT_EQ(state.phase, wrapped ? phase_before ^ 1u : phase_before) << "step " << step;
  }
}

TEST(PipelineState, OneStageFlipsThePhaseEveryTime) {
  auto state = PipelineState<1>::consumer_start();
  for (uint32_t step = 1; step <= 5; ++step) {
    state.advance();
    EXPECT_EQ(state.index, 0);
    EXPECT_EQ(state.phase, step & 1u);
  }
}

// Advancing k times from a start state equals the state computed directly:
// index = k % S, phase = (k / S) & 1, XOR the start phase.
template <int Stages>
void expect_advance_matches_direct_formula() {
  for (const auto start : {PipelineState<Stages>::consumer_start(),
                           PipelineState<Stages>::producer_start()}) {
    auto state = start;
    for (int k = 0; k <= 10 * Stages + 3; ++k) {
      ASSERT_EQ(state.index, k % Stages) << "S = " << Stages << ", k = " << k;
      ASSERT_EQ(state.phase, uint32_t((k / Stages) & 1) ^ start.phase)
          << "S = " << Stages << ", k = " << k << ", start phase " << start.phase;
      state.advance();
    }
  }
}

TEST(PipelineState, AdvancingKTimesMatchesTheDirectFormula) {
  expect_advance_matches_direct_formula<1>();
  expect_advance_matches_direct_formula<2>();
  expect_advance_matches_direct_formula<3>();
  expect_advance_matches_direct_formula<4>();
  expect_advance_matches_direct_formula<5>();
  expect_advance_matches_direct_formula<8>();
}

TEST(PipelineState, IsUsableInConstantExpressions) {
  constexpr auto advanced = [] {
    auto state = PipelineState<2>::producer_start();
    state.advance();
    state.advance();
    return state;
  }();
  static_assert(advanced.index == 0 && advanced.phase == 0u);
}

TEST(PipelineState, AdvancingByCountEqualsAdvancingOneByOne) {
  for (int start = 0; start < 5; ++start)
    for (int count = 0; count < 23; ++count) {
      PipelineState<5> stepped{start, 1};
      for (int i = 0; i < count; ++i) stepped.advance();
      PipelineState<5> jumped{start, 1};
      jumped.advance(count);
      EXPECT_EQ(jumped.index, stepped.index) << "start " << start << ", count " << count;
      EXPECT_EQ(jumped.phase, stepped.phase) << "start " << start << ", count " << count;
    }
}

TEST(PipelineState, AdvancedIsACopyMovedOnAndLeavesTheOriginal) {
  for (int count = 0; count < 11; ++count) {
    const PipelineState<2> start = PipelineState<2>::producer_start();
    PipelineState<2> moved = start;
    moved.advance(count);
    const PipelineState<2> copy = start.advanced(count);
    EXPECT_EQ(copy.index, moved.index) << "count " << count;
    EXPECT_EQ(copy.phase, moved.phase) << "count " << count;
    EXPECT_EQ(start.index, 0);
    EXPECT_EQ(start.phase, 1u);
  }
  static_assert(PipelineState<4>::consumer_start().advanced(6).index == 2);
  static_assert(PipelineState<4>::consumer_start().advanced(6).phase == 1u);
}
