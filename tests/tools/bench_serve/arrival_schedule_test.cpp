#include "tools/bench_serve/arrival_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace baton::bench_serve {
namespace {

TEST(ArrivalSchedule, InfiniteRateSendsEverythingAtOnce) {
  const std::vector<double> t = arrival_offsets(5, std::numeric_limits<double>::infinity(), 1);
  EXPECT_EQ(t, std::vector<double>(5, 0.0));
}

TEST(ArrivalSchedule, SameSeedSameScheduleOtherSeedOther) {
  EXPECT_EQ(arrival_offsets(100, 4, 42), arrival_offsets(100, 4, 42));
  EXPECT_NE(arrival_offsets(100, 4, 42), arrival_offsets(100, 4, 43));
}

TEST(ArrivalSchedule, StartsAtZeroAndNeverGoesBack) {
  const std::vector<double> t = arrival_offsets(1000, 50, 7);
  EXPECT_EQ(t.front(), 0);
  for (size_t i = 1; i < t.size(); ++i) ASSERT_GE(t[i], t[i - 1]);
}

// Exponential gaps: mean 1/rate and standard deviation equal to the mean. With 20000 gaps the
// standard error of each is under 1%, so 3% is a loose bound.
TEST(ArrivalSchedule, GapsAreExponentialAtTheRequestedRate) {
  const double rate = 10;
  const std::vector<double> t = arrival_offsets(20001, rate, 3);
  const double n = static_cast<double>(t.size() - 1);
  const double mean = t.back() / n;
  double squares = 0;
  for (size_t i = 1; i < t.size(); ++i) squares += std::pow(t[i] - t[i - 1] - mean, 2);
  const double stddev = std::sqrt(squares / n);
  EXPECT_NEAR(1 / mean, rate, 0.03 * rate);
  EXPECT_NEAR(stddev / mean, 1.0, 0.03);
}

}  // namespace
}  // namespace baton::bench_serve
