#include "core/serving/sampling/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "baton/error.h"

namespace baton {
namespace {

SamplingParams plain(float temperature) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  return p;
}

TEST(Sampler, GreedyPicksTheLargestLogitAndTheFirstOnTies) {
  Sampler sampler(plain(0.0f));
  EXPECT_EQ(sampler.sample(std::vector<float>{0.1f, 3.0f, -1.0f, 2.9f}, {}), 1);
  EXPECT_EQ(sampler.sample(std::vector<float>{1.0f, 5.0f, 5.0f}, {}), 1);
}

TEST(Sampler, SameSeedGivesSameTokens) {
  const std::vector<float> logits = {1.0f, 1.1f, 0.9f, 1.2f, 0.8f, 1.0f};
  SamplingParams p = plain(1.0f);
  p.seed = 1234;
  Sampler a(p), b(p);
  std::vector<int32_t> ta, tb;
  for (int i = 0; i < 50; ++i) {
    ta.push_back(a.sample(logits, {}));
    tb.push_back(b.sample(logits, {}));
  }
  EXPECT_EQ(ta, tb);
  EXPECT_GT(std::set<int32_t>(ta.begin(), ta.end()).size(), 1u) << "temperature 1 should vary";
}

TEST(Sampler, TemperatureOneMatchesSoftmaxFrequencies) {
  const std::vector<float> logits = {0.0f, std::log(2.0f), std::log(5.0f)};  // probs 1/8, 2/8, 5/8
  Sampler sampler(plain(1.0f));
  std::map<int32_t, int> counts;
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) ++counts[sampler.sample(logits, {})];
  // 4 standard deviations of a binomial at p = 5/8 over 20000 draws is about 0.014.
  EXPECT_NEAR(counts[0] / double(kDraws), 1.0 / 8, 0.015);
  EXPECT_NEAR(counts[1] / double(kDraws), 2.0 / 8, 0.015);
  EXPECT_NEAR(counts[2] / double(kDraws), 5.0 / 8, 0.015);
}

TEST(Sampler, TopKKeepsOnlyTheKBest) {
  SamplingParams p = plain(5.0f);  // hot, so without the cut every token would appear
  p.top_k = 2;
  Sampler sampler(p);
  const std::vector<float> logits = {0.0f, 3.0f, 1.0f, 2.0f};
  for (int i = 0; i < 500; ++i) {
    const int32_t t = sampler.sample(logits, {});
    EXPECT_TRUE(t == 1 || t == 3) << t;
  }
}

TEST(Sampler, TopPKeepsTheSmallestSetReachingP) {
  SamplingParams p = plain(1.0f);
  p.top_p = 0.7f;  // probs 0.5, 0.3, 0.2: the first two reach 0.8 >= 0.7
  Sampler sampler(p);
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  std::set<int32_t> seen;
  for (int i = 0; i < 500; ++i) seen.insert(sampler.sample(logits, {}));
  EXPECT_EQ(seen, (std::set<int32_t>{0, 1}));
}

TEST(Sampler, MinPDropsTokensFarBelowTheBest) {
  SamplingParams p = plain(1.0f);
  p.min_p = 0.5f;  // keeps probabilities >= half the top one: 0.4 and 0.3, not 0.2 or 0.1
  Sampler sampler(p);
  const std::vector<float> logits = {std::log(0.4f), std::log(0.3f), std::log(0.2f),
                                     std::log(0.1f)};
  std::set<int32_t> seen;
  for (int i = 0; i < 500; ++i) seen.insert(sampler.sample(logits, {}));
  EXPECT_EQ(seen, (std::set<int32_t>{0, 1}));
}

TEST(Sampler, RepetitionPenaltyDemotesRecentTokens) {
  SamplingParams p = plain(0.0f);
  p.repetition_penalty = 2.0f;
  Sampler sampler(p);
  const std::vector<float> logits = {3.0f, 2.0f, -1.0f};
  EXPECT_EQ(sampler.sample(logits, std::vector<int32_t>{0}), 1);  // 3/2 = 1.5 < 2
  p.repeat_last_n = 1;
  Sampler windowed(p);
  EXPECT_EQ(windowed.sample(logits, std::vector<int32_t>{0, 1}), 0)
      << "token 0 is outside the one-token window";
}

TEST(Sampler, PresenceAndFrequencyPenaltiesCountGeneratedTokensOnly) {
  SamplingParams p = plain(0.0f);
  p.presence_penalty = 0.5f;
  p.frequency_penalty = 0.4f;
  Sampler sampler(p);
  const std::vector<float> logits = {3.0f, 2.0f, 1.5f};
  // Token 0 twice in the output: 3 - 0.5 - 2 * 0.4 = 1.7 < 2.
  EXPECT_EQ(sampler.sample(logits, std::vector<int32_t>{0, 0}, 0), 1);
  // The same tokens as prompt are not penalised.
  EXPECT_EQ(sampler.sample(logits, std::vector<int32_t>{0, 0}, 2), 0);
}

TEST(Sampler, RejectsInvalidParameters) {
  SamplingParams p;
  p.top_p = 0.0f;
  EXPECT_THROW(Sampler{p}, Error);
  p = SamplingParams{};
  p.repetition_penalty = 0.0f;
  EXPECT_THROW(Sampler{p}, Error);
  p = SamplingParams{};
  p.temperature = NAN;
  EXPECT_THROW(Sampler{p}, Error);
}

}  // namespace
}  // namespace baton
