#include "core/serving/engine/beam_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "baton/error.h"

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

// Candidates are log-softmax probabilities, likeliest first, checked against a double-precision
// softmax (tolerance 1e-6); under a grammar only allowed tokens, by their share among those.
TEST(BeamSearch, CandidatesAreTheLikeliestAllowedTokens) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 0.5f};
  const auto log_share = [&](int token, const std::vector<int>& among) {
    double sum = 0;
    for (int t : among) sum += std::exp(static_cast<double>(logits[t]));
    return std::log(std::exp(static_cast<double>(logits[token])) / sum);
  };
  const std::vector<TokenLogprob> free = beam_candidates(logits, 2);
  ASSERT_EQ(free.size(), 2u);
  EXPECT_EQ(free[0].token, 1);
  EXPECT_EQ(free[1].token, 2);
  EXPECT_NEAR(free[0].logprob, log_share(1, {0, 1, 2, 3}), 1e-6);

  // Token 1 disallowed; token 3 lies past the mask's end, so it is disallowed too.
  const std::vector<char> allowed = {1, 0, 1};
  const std::vector<TokenLogprob> masked = beam_candidates(logits, 4, &allowed);
  ASSERT_EQ(masked.size(), 2u);
  EXPECT_EQ(masked[0].token, 2);
  EXPECT_EQ(masked[1].token, 0);
  EXPECT_NEAR(masked[0].logprob, log_share(2, {0, 2}), 1e-6);
  EXPECT_NEAR(masked[1].logprob, log_share(0, {0, 2}), 1e-6);
}

TEST(BeamSearch, AStepWaitsForEveryLiveBeamAndTakesThemInBeamOrder) {
  BeamSearch search;
  EXPECT_FALSE(search.report(11, {{4, -0.5f}}, 2));
  search.forget(11);  // preempted: it reports again
  EXPECT_FALSE(search.report(12, {{5, -0.25f}}, 2));
  EXPECT_TRUE(search.report(11, {{6, -1.0f}}, 2));
  const std::vector<SeqId> order = {12, 11};
  const auto top = search.take(order);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0][0].token, 5);
  EXPECT_EQ(top[1][0].token, 6);
  EXPECT_FALSE(search.report(12, {{7, -0.1f}}, 2)) << "take() forgets the step's reports";
}

TEST(BeamSearch, TheBestFinishedBeamsComeFirstAndTiesKeepTheirOrder) {
  BeamSearch search;
  search.finish({.tokens = {1}, .score = -2.0});
  search.finish({.tokens = {2}, .score = -1.0});
  search.finish({.tokens = {3}, .score = -2.0});
  search.finish({.tokens = {4}, .score = -3.0});
  EXPECT_EQ(search.finished(), 4u);
  const std::vector<FinishedBeam> best = search.best(3);
  ASSERT_EQ(best.size(), 3u);
  EXPECT_EQ(best[0].tokens, std::vector<int32_t>{2});
  EXPECT_EQ(best[1].tokens, std::vector<int32_t>{1});
  EXPECT_EQ(best[2].tokens, std::vector<int32_t>{3});
}

TEST(BeamSearch, FewerFinishedBeamsThanAskedForIsTheRequestsError) {
  BeamSearch search;
  search.finish({.tokens = {1}, .score = -1.0});
  try {
    search.best(2);
    FAIL() << "best(2) of one beam returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("found 1 of the n = 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton
