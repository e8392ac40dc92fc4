// The simulator's workload: the mix, its arrival rate, and prompts that share only their
// system prompt.

#include "tools/schedule_sim/mixed_workload.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "baton/error.h"

namespace baton::schedule_sim {
namespace {

TEST(MixedWorkload, HasTheMixAndArrivesAtTheLoadsRate) {
  const WorkloadSpec spec{.requests = 20000, .load = 0.9, .slots = 8, .seed = 3};
  const std::vector<SimulatedRequest> requests = mixed_workload(spec);
  ASSERT_EQ(requests.size(), 20000u);
  int64_t long_ones = 0, output = 0;
  for (const SimulatedRequest& r : requests) {
    long_ones += r.is_long;
    output += r.output_tokens;
    if (r.is_long) {
      EXPECT_GE(r.output_tokens, 256);
      EXPECT_LE(r.output_tokens, 320);
    } else {
      EXPECT_GE(r.output_tokens, 16);
      EXPECT_LE(r.output_tokens, 32);
    }
  }
  EXPECT_NEAR(static_cast<double>(long_ones) / 20000, 0.2, 0.015);
  // 8 slots at one token a step serve 8 / 76.8 requests a step: 0.9 of it arrives. A Poisson
  // count over 20000 gaps is within 2% of its mean with near certainty.
  const double rate = 19999 / requests.back().arrival;
  EXPECT_NEAR(rate, 0.9 * 8 / 76.8, 0.02 * 0.9 * 8 / 76.8);
  // With each 8-token question taking 0.4 steps alone, one request takes 76.8 / 8 + 0.4 steps.
  const auto slower = mixed_workload(
      {.requests = 20000, .load = 0.9, .slots = 8, .prefill_tokens_per_step = 20, .seed = 3});
  EXPECT_NEAR(19999 / slower.back().arrival, 0.9 / 10, 0.02 * 0.9 / 10);
  // Uniform lengths: 24 tokens on average for a short answer, 288 for a long one.
  const double long_share = static_cast<double>(long_ones) / 20000;
  EXPECT_NEAR(static_cast<double>(output) / 20000, (1 - long_share) * 24 + long_share * 288, 0.5);
  for (size_t i = 1; i < requests.size(); ++i) {
    ASSERT_GE(requests[i].arrival, requests[i - 1].arrival);
  }
}

TEST(MixedWorkload, PromptsShareOnlyTheirSystemPrompt) {
  const std::vector<SimulatedRequest> requests = mixed_workload({.requests = 400, .seed = 5});
  std::set<std::vector<int32_t>> short_prompts, long_prompts, questions;
  for (const SimulatedRequest& r : requests) {
    ASSERT_EQ(r.prompt.size(), 40u);
    (r.is_long ? long_prompts : short_prompts)
        .insert(std::vector<int32_t>(r.prompt.begin(), r.prompt.begin() + 32));
    questions.insert(std::vector<int32_t>(r.prompt.begin() + 32, r.prompt.end()));
  }
  EXPECT_EQ(short_prompts.size(), 2u);
  EXPECT_EQ(long_prompts.size(), 1u);
  EXPECT_FALSE(short_prompts.contains(*long_prompts.begin()));
  EXPECT_EQ(questions.size(), 400u);
}

TEST(MixedWorkload, ASeedGivesOneWorkload) {
  const auto first = mixed_workload({.requests = 50, .seed = 9});
  const auto again = mixed_workload({.requests = 50, .seed = 9});
  const auto other = mixed_workload({.requests = 50, .seed = 10});
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].arrival, again[i].arrival);
    EXPECT_EQ(first[i].output_tokens, again[i].output_tokens);
  }
  EXPECT_NE(first.back().arrival, other.back().arrival);
}

TEST(MixedWorkload, RefusesAnEmptyOrInvertedSpec) {
  for (const WorkloadSpec& spec :
       {WorkloadSpec{.requests = 0}, WorkloadSpec{.load = 0}, WorkloadSpec{.short_min = 40},
        WorkloadSpec{.long_min = 400}, WorkloadSpec{.short_share = 1.5},
        WorkloadSpec{.prefill_tokens_per_step = -1}}) {
    EXPECT_THROW(mixed_workload(spec), Error);
  }
}

}  // namespace
}  // namespace baton::schedule_sim
