// The online output-length predictor on synthetic workloads whose length distributions are
// known, and the prediction log's error and rank agreement.

#include "core/serving/engine/length_predictor.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

namespace baton {
namespace {

constexpr int32_t kBlock = 16;

// A prompt of `system` tokens shared by every request of one template, then `own` tokens of its
// own.
std::vector<int32_t> prompt(int32_t template_id, int32_t system, int32_t own, std::mt19937& rng) {
  std::vector<int32_t> tokens(static_cast<size_t>(system));
  std::iota(tokens.begin(), tokens.end(), 100 * template_id);
  std::uniform_int_distribution<int32_t> token(5000, 9000);
  for (int32_t i = 0; i < own; ++i) tokens.push_back(token(rng));
  return tokens;
}

LengthFeatures features(const std::vector<int32_t>& tokens, int32_t max_tokens = 512) {
  return {.prefix_keys = prefix_keys(tokens, kBlock), .max_tokens = max_tokens};
}

// Two system prompts of different lengths, one whose answers are short (mean 20) and one whose
// answers are long (mean 300), mixed 80/20 with the same max_tokens: the templates alone tell
// them apart.
struct Workload {
  std::mt19937 rng{7};
  std::normal_distribution<double> short_len{20, 4}, long_len{300, 40};
  std::bernoulli_distribution is_short{0.8};

  struct Request {
    LengthFeatures features;
    int32_t length;
    bool long_answer;
  };
  Request next() {
    const bool short_answer = is_short(rng);
    const auto tokens = prompt(short_answer ? 1 : 2, short_answer ? 70 : 150, 10 + rng() % 40, rng);
    const double length = short_answer ? short_len(rng) : long_len(rng);
    return {features(tokens), std::clamp(static_cast<int32_t>(length), 1, 512), !short_answer};
  }
};

TEST(LengthPredictor, KnowsNothingAtFirst) {
  OnlineLengthPredictor predictor;
  std::mt19937 rng(1);
  const LengthPrediction p = predictor.predict(features(prompt(1, 40, 5, rng), 300));
  EXPECT_EQ(p.tokens, 300) << "the worst case, max_tokens";
  EXPECT_EQ(p.confidence, 0);
}

TEST(LengthPredictor, LearnsEachTemplatesLengthsOnline) {
  OnlineLengthPredictor predictor;
  Workload workload;
  for (int i = 0; i < 200; ++i) {
    const auto [request, length, long_answer] = workload.next();
    predictor.observe(request, length);
  }
  PredictionLog log;
  for (int i = 0; i < 200; ++i) {
    const auto [request, length, long_answer] = workload.next();
    const LengthPrediction p = predictor.predict(request);
    log.add(p.tokens, length);
    EXPECT_NEAR(p.tokens, long_answer ? 300 : 20, long_answer ? 40 : 5);
    EXPECT_GT(p.confidence, 0.5);
  }
  // Within a template every prediction is the same (a tie), across templates the order is right:
  // tau-b = 0.32 / sqrt(1 * 0.32) ~ 0.57 for this 80/20 mix at best, far from 0.
  EXPECT_GT(log.kendall_tau(), 0.35);
  EXPECT_LT(log.mean_absolute_error(), 20);
}

TEST(LengthPredictor, FallsBackToRequestsOfTheSameShapeForAnUnseenPrompt) {
  OnlineLengthPredictor predictor;
  std::mt19937 rng(3);
  for (int i = 0; i < 20; ++i) predictor.observe(features(prompt(1, 64, 8, rng), 64), 40);
  const LengthPrediction unseen = predictor.predict(features(prompt(9, 64, 8, rng), 64));
  EXPECT_NEAR(unseen.tokens, 40, 1e-9);
  // A different max_tokens is another shape: only the global level has seen it.
  EXPECT_NEAR(predictor.predict(features(prompt(9, 64, 8, rng), 1000)).tokens, 40, 1e-9);
}

TEST(LengthPredictor, TakesTheClientsHintAndNeverPredictsPastMaxTokens) {
  OnlineLengthPredictor predictor;
  std::mt19937 rng(4);
  const auto tokens = prompt(1, 32, 4, rng);
  for (int i = 0; i < 10; ++i) predictor.observe(features(tokens, 512), 400);
  LengthFeatures hinted = features(tokens, 512);
  hinted.expected_tokens = 12;
  EXPECT_EQ(predictor.predict(hinted).tokens, 12);
  EXPECT_EQ(predictor.predict(hinted).confidence, 1);
  EXPECT_LE(predictor.predict(features(tokens, 256)).tokens, 256);
}

TEST(LengthPredictor, RelearnsATemplateWhoseAnswersChange) {
  OnlineLengthPredictor predictor;
  std::mt19937 rng(5);
  const auto tokens = prompt(1, 48, 4, rng);
  for (int i = 0; i < 300; ++i) predictor.observe(features(tokens), 200);
  for (int i = 0; i < 300; ++i) predictor.observe(features(tokens), 20);
  EXPECT_LT(predictor.predict(features(tokens)).tokens, 30);
}

TEST(LengthPredictor, PrefixKeysFollowTheSharedBlocks) {
  std::mt19937 rng(6);
  const auto a = prompt(1, 64, 10, rng), b = prompt(1, 64, 90, rng), c = prompt(2, 64, 10, rng);
  const auto ka = prefix_keys(a, kBlock), kb = prefix_keys(b, kBlock);
  ASSERT_EQ(ka.size(), 3u);  // the first 1, 2 and 4 blocks: 74 tokens fill 4
  ASSERT_EQ(kb.size(), 4u);  // and the first 8: 154 tokens fill 9
  EXPECT_EQ(std::vector(kb.begin(), kb.begin() + 3), ka) << "the 64 shared tokens";
  EXPECT_NE(prefix_keys(c, kBlock)[0], ka[0]);
  EXPECT_TRUE(prefix_keys(std::vector<int32_t>(kBlock - 1, 3), kBlock).empty());
}

TEST(PredictionLog, KendallTauOfKnownRankings) {
  PredictionLog agree, reverse, flat;
  for (int i = 0; i < 10; ++i) {
    agree.add(i, i * 3);
    reverse.add(i, 100 - i);
    flat.add(5, i);
  }
  EXPECT_DOUBLE_EQ(agree.kendall_tau(), 1.0);
  EXPECT_DOUBLE_EQ(reverse.kendall_tau(), -1.0);
  EXPECT_DOUBLE_EQ(flat.kendall_tau(), 0.0) << "one value for all ranks nothing";
  EXPECT_DOUBLE_EQ(flat.mean_absolute_error(), 2.5);
}

TEST(PredictionLog, KeepsTheLatestPairs) {
  PredictionLog log(4);
  for (int i = 0; i < 4; ++i) log.add(i, 100 - i);  // reversed
  for (int i = 0; i < 4; ++i) log.add(i, i);        // then in agreement: the old ones are gone
  EXPECT_EQ(log.size(), 4u);
  EXPECT_EQ(log.total(), 8u);
  EXPECT_DOUBLE_EQ(log.kendall_tau(), 1.0);
}

}  // namespace
}  // namespace baton
