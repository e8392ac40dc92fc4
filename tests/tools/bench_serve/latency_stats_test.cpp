#include "tools/bench_serve/latency_stats.h"

#include <gtest/gtest.h>

namespace baton::bench_serve {
namespace {

TEST(LatencyStats, PercentilesInterpolateBetweenRanks) {
  // Ranks 0..3; p90 sits at rank 2.7, p99 at rank 2.97.
  const std::vector<double> sorted = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(percentile(sorted, 0), 10);
  EXPECT_DOUBLE_EQ(percentile(sorted, 50), 25);
  EXPECT_NEAR(percentile(sorted, 90), 37, 1e-9);
  EXPECT_NEAR(percentile(sorted, 99), 39.7, 1e-9);
  EXPECT_DOUBLE_EQ(percentile(sorted, 100), 40);
}

TEST(LatencyStats, SummarySortsItsSamples) {
  const LatencySummary s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.p50, 3);
  EXPECT_NEAR(s.p90, 4.6, 1e-9);
  EXPECT_NEAR(s.p99, 4.96, 1e-9);
}

TEST(LatencyStats, OneSampleIsEveryPercentile) {
  const LatencySummary s = summarize({7.5});
  EXPECT_DOUBLE_EQ(s.mean, 7.5);
  EXPECT_DOUBLE_EQ(s.p50, 7.5);
  EXPECT_DOUBLE_EQ(s.p99, 7.5);
}

TEST(LatencyStats, NoSamplesGiveZeros) {
  const LatencySummary s = summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.mean, 0);
  EXPECT_EQ(s.p99, 0);
}

}  // namespace
}  // namespace baton::bench_serve
