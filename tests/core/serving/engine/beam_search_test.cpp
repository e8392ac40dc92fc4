#include "core/serving/engine/beam_search.h"

#include <gtest/gtest.h>

#include <cmath>

namespace baton {
namespace {

const auto kNothingEnds = [](size_t, int32_t) { return false; };

TEST(BeamSearch, KeepsTheBestWidthByCumulativeLogprob) {
  const std::vector<double> cumulative = {-1.0, -2.0};
  const std::vector<std::vector<TokenLogprob>> top = {{{10, -0.5f}, {11, -2.0f}},
                                                      {{20, -0.1f}, {21, -0.2f}}};
  const BeamSelection s = select_beams(cumulative, top, 2, kNothingEnds);
  ASSERT_EQ(s.live.size(), 2u);
  EXPECT_EQ(s.live[0].parent, 0u);
  EXPECT_EQ(s.live[0].token, 10);
  EXPECT_DOUBLE_EQ(s.live[0].cumulative_logprob, -1.5);
  EXPECT_EQ(s.live[1].parent, 1u);
  EXPECT_EQ(s.live[1].token, 20);
  EXPECT_TRUE(s.finished.empty());
}

TEST(BeamSearch, EndingTokensFinishOnlyWithinTheFirstWidthRanks) {
  const std::vector<double> cumulative = {0.0};
  const std::vector<std::vector<TokenLogprob>> top = {
      {{2, -0.1f}, {5, -0.2f}, {6, -0.3f}, {2, -0.4f}}};
  const auto ends = [](size_t, int32_t t) { return t == 2; };
  const BeamSelection s = select_beams(cumulative, top, 2, ends);
  ASSERT_EQ(s.finished.size(), 1u);
  EXPECT_EQ(s.finished[0].token, 2);
  ASSERT_EQ(s.live.size(), 2u) << "live beams are refilled past an ending token";
  EXPECT_EQ(s.live[0].token, 5);
  EXPECT_EQ(s.live[1].token, 6);
}

TEST(BeamSearch, TiesGoToTheLowerBeamThenTheLikelierToken) {
  const std::vector<double> cumulative = {-1.0, -1.0};
  const std::vector<std::vector<TokenLogprob>> top = {{{7, -1.0f}, {8, -1.0f}}, {{3, -1.0f}}};
  const BeamSelection s = select_beams(cumulative, top, 2, kNothingEnds);
  ASSERT_EQ(s.live.size(), 2u);
  EXPECT_EQ(s.live[0].token, 7);
  EXPECT_EQ(s.live[1].token, 8);
}

TEST(BeamSearch, ScoreDividesByLengthToThePenalty) {
  EXPECT_DOUBLE_EQ(beam_score(-6.0, 3, 1.0f), -2.0);
  EXPECT_DOUBLE_EQ(beam_score(-6.0, 3, 0.0f), -6.0);
  EXPECT_NEAR(beam_score(-6.0, 4, 0.5f), -3.0, 1e-12);
}

}  // namespace
}  // namespace baton
