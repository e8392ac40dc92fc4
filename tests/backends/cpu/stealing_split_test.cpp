#include "backends/cpu/stealing_split.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <chrono>
#include <thread>
#include <vector>

namespace baton::cpu {
namespace {

std::vector<int64_t> drain(StealingSplit& split, int thread) {
  std::vector<int64_t> units;
  for (int64_t u; (u = split.next(thread)) >= 0;) units.push_back(u);
  return units;
}

TEST(StealingSplit, OneThreadTakesEveryUnitInOrder) {
  StealingSplit split(7, 1);
  EXPECT_EQ(drain(split, 0), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(StealingSplit, OwnersTakeTheirRunFrontFirstLikeAStaticSplit) {
  StealingSplit split(10, 3);
  for (int64_t expected : {0, 1, 2}) EXPECT_EQ(split.next(0), expected);
  for (int64_t expected : {3, 4, 5}) EXPECT_EQ(split.next(1), expected);
  for (int64_t expected : {6, 7, 8, 9}) EXPECT_EQ(split.next(2), expected);
  EXPECT_EQ(split.next(0), -1);
}

TEST(StealingSplit, AnIdleThreadStealsFromTheBackOfTheNextRun) {
  StealingSplit split(8, 2);  // runs 0..3 and 4..7
  EXPECT_EQ(split.next(1), 4);
  EXPECT_EQ(drain(split, 0), (std::vector<int64_t>{0, 1, 2, 3, 7, 6, 5}));
  EXPECT_EQ(split.next(1), -1);
}

TEST(StealingSplit, AThreadBeyondTheRunsOnlySteals) {
  StealingSplit split(4, 2);  // runs 0..1 and 2..3; thread 5 starts stealing at run 0
  EXPECT_EQ(drain(split, 5), (std::vector<int64_t>{1, 0, 3, 2}));
}

TEST(StealingSplit, FewerUnitsThanThreadsLeavesSomeRunsEmpty) {
  StealingSplit split(2, 4);  // runs: none, 0, none, 1
  EXPECT_EQ(split.next(0), 0);
  EXPECT_EQ(split.next(2), 1);
  EXPECT_EQ(split.next(1), -1);
  EXPECT_EQ(split.next(3), -1);
}

TEST(StealingSplit, NoUnitsGivesNothing) {
  StealingSplit split(0, 4);
  EXPECT_EQ(split.next(0), -1);
  EXPECT_EQ(split.next(3), -1);
}

// Racing threads, one of them slow and one never started (a team smaller than asked for): every
// unit is taken exactly once.
TEST(StealingSplit, RacingThreadsTakeEveryUnitExactlyOnce) {
  for (int trial = 0; trial < 20; ++trial) {
    constexpr int kUnits = 1000, kRuns = 4, kTeam = 3;
    StealingSplit split(kUnits, kRuns);
    std::vector<int> taken(kUnits, 0);
    int team = 0;
#pragma omp parallel num_threads(kTeam)
    {
#pragma omp single nowait
      team = omp_get_num_threads();
      const int thread = omp_get_thread_num();
      for (int64_t u; (u = split.next(thread)) >= 0;) {
#pragma omp atomic
        ++taken[u];
        if (thread == 0 && u % 50 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    ASSERT_EQ(team, kTeam) << "OpenMP gave a smaller team, so nothing raced";
    for (int u = 0; u < kUnits; ++u) ASSERT_EQ(taken[u], 1) << "unit " << u << " trial " << trial;
  }
}

TEST(StealingSplit, CountsUpToThirtyTwoBitsOfUnits) {
  constexpr int64_t kMost = (int64_t{1} << 32) - 1;
  StealingSplit split(kMost, 1);
  EXPECT_EQ(split.next(0), 0);
  EXPECT_THROW(StealingSplit(kMost + 1, 2), std::invalid_argument);
  EXPECT_THROW(StealingSplit(-1, 2), std::invalid_argument);
}

}  // namespace
}  // namespace baton::cpu
