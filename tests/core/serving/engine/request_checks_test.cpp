#include "core/serving/engine/request_checks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "baton/error.h"

namespace baton {
namespace {

std::string refusal(const std::vector<int32_t>& prompt, const GenerationParams& params,
                    int32_t priority = 0, const LLMOptions& options = {}) {
  try {
    check_request(prompt, params, priority, options, 100);
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
    return e.what();
  }
  return "accepted";
}

TEST(RequestChecks, ARequestIsRefusedNamingWhatIsWrong) {
  const GenerationParams ok;
  EXPECT_EQ(refusal({1, 2}, ok), "accepted");
  EXPECT_NE(refusal({}, ok).find("the prompt is empty"), std::string::npos);
  EXPECT_NE(refusal({1, 100}, ok).find("prompt token 100 is outside the vocabulary"),
            std::string::npos);
  EXPECT_NE(refusal({1}, ok, 2).find("(scheduling_policy priority)"), std::string::npos);
  EXPECT_EQ(refusal({1}, ok, 2, {.scheduling_policy = SchedulingPolicy::kPriority}), "accepted");
  GenerationParams beams;
  beams.use_beam_search = true;
  beams.beam_width = 2;
  beams.n = 3;
  EXPECT_NE(refusal({1}, beams).find("n must not exceed beam_width = 2"), std::string::npos);
  GenerationParams best_of;
  best_of.n = 2;
  best_of.best_of = 1;
  EXPECT_NE(refusal({1}, best_of).find("best_of"), std::string::npos);
}

TEST(RequestChecks, CompletionsReportedAreBestOfSamplesOrNBeams) {
  GenerationParams p;
  p.n = 2;
  EXPECT_EQ(reported_completions(p), 2);
  p.best_of = 5;
  EXPECT_EQ(reported_completions(p), 5);
  p.use_beam_search = true;
  EXPECT_EQ(reported_completions(p), 2);
}

}  // namespace
}  // namespace baton
