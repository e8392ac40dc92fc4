#include "tools/serve/api_key.h"

#include <gtest/gtest.h>

namespace baton::serve {
namespace {

TEST(BearerToken, MatchesOnlyTheExactHeader) {
  EXPECT_TRUE(bearer_token_matches("Bearer sekrit", "sekrit"));
  EXPECT_FALSE(bearer_token_matches("Bearer sekriT", "sekrit"));
  EXPECT_FALSE(bearer_token_matches("bearer sekrit", "sekrit"));
  EXPECT_FALSE(bearer_token_matches("Bearer sekri", "sekrit"));
  EXPECT_FALSE(bearer_token_matches("Bearer sekrit ", "sekrit"));
  // A header that repeats the expected one is longer, not a match.
  EXPECT_FALSE(bearer_token_matches("Bearer sekritBearer sekrit", "sekrit"));
  EXPECT_FALSE(bearer_token_matches("", "sekrit"));
  EXPECT_FALSE(bearer_token_matches("sekrit", "sekrit"));
  EXPECT_TRUE(bearer_token_matches("Bearer ", ""));
}

}  // namespace
}  // namespace baton::serve
