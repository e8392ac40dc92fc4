#include "core/api/live_requests.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

SequenceUpdate finished(uint64_t id, int32_t sample) {
  return {.id = id, .sample = sample, .finished = true};
}

TEST(LiveRequests, ARequestEndsWithItsLastCompletion) {
  LiveRequests live;
  GenerationParams two;
  two.n = 2;
  live.added(1, two);
  EXPECT_EQ(live.sequences(), 2);
  EXPECT_FALSE(live.ended_by({.id = 1, .sample = 0, .new_tokens = {5}}));
  EXPECT_FALSE(live.ended_by(finished(1, 0)));
  EXPECT_FALSE(live.ended_by(finished(1, 0))) << "a repeated report counts once";
  EXPECT_EQ(live.sequences(), 1);
  EXPECT_TRUE(live.ended_by(finished(1, 1)));
  EXPECT_FALSE(live.contains(1));
  EXPECT_EQ(live.sequences(), 0);
}

TEST(LiveRequests, BestOfCountsEverySample) {
  LiveRequests live;
  GenerationParams p;
  p.best_of = 3;
  live.added(1, p);
  EXPECT_EQ(live.sequences(), 3);
}

TEST(LiveRequests, BeamsAllCountUntilTheSearchEnds) {
  LiveRequests live;
  GenerationParams beams;
  beams.use_beam_search = true;
  beams.n = 2;
  beams.beam_width = 3;
  live.added(1, beams);
  EXPECT_FALSE(live.ended_by(finished(1, 0)));
  EXPECT_EQ(live.sequences(), 3);
  EXPECT_TRUE(live.ended_by(finished(1, 1)));
  EXPECT_EQ(live.sequences(), 0);
}

TEST(LiveRequests, ErrorsAndAbortsEndTheWholeRequest) {
  LiveRequests live;
  GenerationParams two;
  two.n = 2;
  live.added(1, two);
  live.added(2, two);
  EXPECT_TRUE(live.ended_by({.id = 1, .finished = true, .error = "too long"}));
  live.aborted(2);
  EXPECT_FALSE(live.contains(1));
  EXPECT_FALSE(live.contains(2));
  EXPECT_EQ(live.sequences(), 0);
  EXPECT_FALSE(live.ended_by(finished(2, 0))) << "an update after the abort changes nothing";
}

TEST(LiveRequests, AbortingASampleEndsOnlyItUnlessTheRequestSearchesBeams) {
  LiveRequests live;
  GenerationParams two;
  two.n = 2;
  live.added(1, two);
  live.sample_aborted(1, 1);
  EXPECT_TRUE(live.contains(1));
  EXPECT_TRUE(live.ended_by(finished(1, 0)));

  GenerationParams beams;
  beams.use_beam_search = true;
  beams.n = 2;
  beams.beam_width = 4;
  live.added(2, beams);
  EXPECT_EQ(live.sequences(), 4) << "every beam runs";
  live.sample_aborted(2, 0);
  EXPECT_FALSE(live.contains(2));
  EXPECT_EQ(live.sequences(), 0);
}

}  // namespace
}  // namespace baton
