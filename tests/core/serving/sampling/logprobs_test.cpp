#include "core/serving/sampling/logprobs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/serving/sampling/sampler.h"

namespace baton {
namespace {

TEST(LogSoftmax, NormalisesTheRawLogits) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, -1.0f};
  const LogSoftmax lp(logits);
  double total = 0;
  for (int32_t t = 0; t < 4; ++t) total += std::exp(lp(t));
  EXPECT_NEAR(total, 1.0, 1e-6);
  EXPECT_NEAR(lp(1) - lp(0), 2.0, 1e-6) << "differences of logits are kept";
}

TEST(LogSoftmax, TopIsMostLikelyFirstWithLowerIdsOnTies) {
  const std::vector<float> logits = {0.5f, 2.0f, 2.0f, 1.0f};
  const std::vector<TokenLogprob> top = LogSoftmax(logits).top(3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].token, 1);
  EXPECT_EQ(top[1].token, 2);
  EXPECT_EQ(top[2].token, 3);
  EXPECT_EQ(LogSoftmax(logits).top(10).size(), 4u) << "never more than the vocabulary";
}

TEST(SampleSeed, SampleZeroKeepsTheSeedAndOthersDiffer) {
  EXPECT_EQ(sample_seed(42, 0), 42u);
  std::set<uint64_t> seeds;
  for (int32_t i = 0; i < 8; ++i) seeds.insert(sample_seed(42, i));
  for (int32_t i = 0; i < 8; ++i) seeds.insert(sample_seed(43, i));
  EXPECT_EQ(seeds.size(), 16u);
}

}  // namespace
}  // namespace baton
