#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/test_data.h"
#include "tests/tools/baton_command.h"

namespace {

using baton::testing::Capture;
using baton::testing::run_baton;

std::filesystem::path stories_model() {
  return baton::testing::shared_model("stories260K.gguf");
}

std::filesystem::path stories_text() {
  const std::filesystem::path dir = baton::testing::shared_dir();
  return dir.empty() ? dir : dir / "data" / "short-stories.txt";
}

std::string args(const std::string& extra) {
  return "perplexity -m " + stories_model().string() + " -f " + stories_text().string() + " -t 2 " +
         extra;
}

TEST(CliPerplexity, PrintsProgressOnStderrAndTheFinalEstimateOnStdout) {
  BATON_REQUIRE_SHARED_FILE(stories_model());
  BATON_REQUIRE_SHARED_FILE(stories_text());
  const auto out = run_baton(args("--ctx 128"));
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.out.rfind("Final estimate: PPL = ", 0), 0u) << out.out;
  EXPECT_NE(out.out.find(" +/- "), std::string::npos) << out.out;
  const auto progress = run_baton(args("--ctx 128"), Capture::kStderr);
  EXPECT_EQ(progress.out.rfind("[1]", 0), 0u) << progress.out;
  EXPECT_NE(progress.out.find(",[2]"), std::string::npos) << progress.out;
}

TEST(CliPerplexity, JsonHasTheEstimateAndItsCounts) {
  BATON_REQUIRE_SHARED_FILE(stories_model());
  BATON_REQUIRE_SHARED_FILE(stories_text());
  const auto out = run_baton(args("--ctx 128 --json"));
  ASSERT_EQ(out.exit_code, 0);
  const auto j = nlohmann::json::parse(out.out);
  EXPECT_GT(j.at("ppl").get<double>(), 1.0);
  EXPECT_GT(j.at("ppl_error").get<double>(), 0.0);
  EXPECT_EQ(j.at("n_ctx").get<int>(), 128);
  EXPECT_EQ(j.at("n_scored").get<int>(), j.at("n_chunks").get<int>() * 63);
}

TEST(CliPerplexity, TooSmallContextAndUnreadableFileFailWithAMessage) {
  BATON_REQUIRE_SHARED_FILE(stories_model());
  BATON_REQUIRE_SHARED_FILE(stories_text());
  const auto small = run_baton(args("--ctx 8"), Capture::kStderr);
  EXPECT_EQ(small.exit_code, 1);
  EXPECT_NE(small.out.find("below the minimum of 16"), std::string::npos) << small.out;
  const auto missing = run_baton(
      "perplexity -m " + stories_model().string() + " -f /nonexistent/text.txt", Capture::kStderr);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("/nonexistent/text.txt"), std::string::npos) << missing.out;
}

}  // namespace
