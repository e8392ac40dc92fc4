#include "core/serving/engine/stop_matcher.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(StopMatcher, WithoutStopsEverythingPassesThrough) {
  StopMatcher m({});
  EXPECT_EQ(m.push("Hello").text, "Hello");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopMatcher, StopSplitAcrossPiecesIsWithheldThenCut) {
  StopMatcher m({"\n\nUser:"});
  EXPECT_EQ(m.push("Hi there.").text, "Hi there.");
  auto r = m.push("\n");
  EXPECT_EQ(r.text, "") << "could be the start of the stop string";
  r = m.push("\nUs");
  EXPECT_EQ(r.text, "");
  r = m.push("er: next");
  EXPECT_EQ(r.text, "");
  ASSERT_TRUE(r.stop.has_value());
  EXPECT_EQ(*r.stop, "\n\nUser:");
}

TEST(StopMatcher, WithheldTextIsReleasedWhenItCannotMatch) {
  StopMatcher m({"END"});
  EXPECT_EQ(m.push("The EN").text, "The ");
  const auto r = m.push("Dless");
  EXPECT_TRUE(r.stop.has_value());
  EXPECT_EQ(r.text, "");
  StopMatcher n({"END"});
  EXPECT_EQ(n.push("The EN").text, "The ");
  EXPECT_EQ(n.push("ormous").text, "ENormous");
  EXPECT_EQ(n.push(" E").text, " ");
  EXPECT_EQ(n.flush(), "E");
}

TEST(StopMatcher, EarliestOfSeveralStopsWins) {
  StopMatcher m({"cat", "a"});
  const auto r = m.push("the cat sat");
  ASSERT_TRUE(r.stop.has_value());
  EXPECT_EQ(*r.stop, "cat");
  EXPECT_EQ(r.text, "the ");
}

}  // namespace
}  // namespace baton
