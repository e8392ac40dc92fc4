#include "core/serving/engine/length_service.h"

#include <gtest/gtest.h>

#include <vector>

namespace baton {
namespace {

LengthFeatures features(int32_t max_tokens, int32_t expected = 0) {
  return {.prefix_keys = {42}, .max_tokens = max_tokens, .expected_tokens = expected};
}

TEST(LengthPredictionService, AColdPredictionIsMadeAgainOnceSomethingIsLearned) {
  LengthPredictionService lengths(nullptr);
  PredictedLength cold = lengths.arrive(features(500));
  EXPECT_TRUE(cold.cold) << "nothing learned yet: the limit stands for the length";
  EXPECT_EQ(cold.predicted_output, 500);
  EXPECT_FALSE(lengths.take_learned());
  for (int i = 0; i < 4; ++i) {
    PredictedLength alike = lengths.arrive(features(500));
    lengths.learn(alike, 20);
  }
  EXPECT_TRUE(lengths.take_learned());
  EXPECT_FALSE(lengths.take_learned()) << "taken once";
  ASSERT_TRUE(lengths.refresh(cold));
  EXPECT_LT(cold.predicted_output, 500);
  EXPECT_EQ(cold.arrival_prediction, cold.predicted_output);
  PredictedLength hinted = lengths.arrive(features(500, 30));
  EXPECT_FALSE(lengths.refresh(hinted)) << "a client's hint is not cold";
}

TEST(LengthPredictionService, WithoutAHeadNothingIsPredictedAfterPrefill) {
  LengthPredictionService lengths(nullptr);
  PredictedLength record = lengths.arrive(features(100));
  const std::vector<float> logits(16, 0.0f);
  EXPECT_FALSE(lengths.predict_after_prefill(record, logits, false));
  EXPECT_FALSE(record.head_predicted);
}

// Trust is judged once the window is full and then every kTrustEvery completions; predictions
// that rank the lengths as they come are trusted, the reverse are not.
TEST(LengthPredictionService, TrustFollowsHowPredictionsRankTheLengths) {
  const auto verdicts = [](bool reversed) {
    LengthPredictionService lengths(nullptr);
    std::vector<bool> out;
    for (int i = 0; i < 2 * static_cast<int>(kTrustWindow); ++i) {
      PredictedLength record{.features = features(1000), .arrival_prediction = 10.0 + i % 7};
      const int32_t generated = reversed ? 100 - i % 7 : 10 + i % 7;
      if (const std::optional<bool> trusted = lengths.learn(record, generated)) {
        out.push_back(*trusted);
      }
    }
    return out;
  };
  const std::vector<bool> ranked = verdicts(false), reversed = verdicts(true);
  ASSERT_FALSE(ranked.empty());
  EXPECT_EQ(ranked.size(), reversed.size());
  for (bool v : ranked) EXPECT_TRUE(v);
  for (bool v : reversed) EXPECT_FALSE(v);
  EngineStats stats;
  LengthPredictionService lengths(nullptr);
  lengths.learn(lengths.arrive(features(1000)), 12);
  lengths.fill(stats);
  EXPECT_EQ(stats.length_predictions, 1);
  EXPECT_EQ(stats.length_head_predictions, 0);
}

}  // namespace
}  // namespace baton
