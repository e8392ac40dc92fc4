#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/temp_file.h"
#include "tests/test_data.h"
#include "tests/tools/baton_command.h"

namespace {

using baton::testing::Capture;
using baton::testing::run_baton;

class CliPerplexity : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(text_.path()) << baton::testing::kGenesis; }
  std::string args(const std::string& extra) const {
    return "perplexity -m " + baton::testing::demo_model().string() + " -f " + text_.str() +
           " -t 2 " + extra;
  }

 private:
  baton::testing::TempFile text_{"genesis.txt"};
};

TEST_F(CliPerplexity, PrintsProgressOnStderrAndTheFinalEstimateOnStdout) {
  const auto out = run_baton(args("--ctx 128"));
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.out.rfind("Final estimate: PPL = ", 0), 0u) << out.out;
  EXPECT_NE(out.out.find(" +/- "), std::string::npos) << out.out;
  const auto progress = run_baton(args("--ctx 128"), Capture::kStderr);
  EXPECT_EQ(progress.out.rfind("[1]", 0), 0u) << progress.out;
  EXPECT_NE(progress.out.find(",[2]"), std::string::npos) << progress.out;
}

TEST_F(CliPerplexity, JsonHasTheEstimateAndItsCounts) {
  const auto out = run_baton(args("--ctx 128 --json"));
  ASSERT_EQ(out.exit_code, 0);
  const auto j = nlohmann::json::parse(out.out);
  EXPECT_GT(j.at("ppl").get<double>(), 1.0);
  EXPECT_GT(j.at("ppl_error").get<double>(), 0.0);
  EXPECT_EQ(j.at("n_ctx").get<int>(), 128);
  EXPECT_EQ(j.at("n_chunks").get<int>(), 3);
  EXPECT_EQ(j.at("n_scored").get<int>(), 3 * 63);
}

// The bundled adapter was trained on The Devil's Dictionary: it scores the held-out entries far
// better than the base, and a second adapter is refused.
TEST(CliPerplexityLora, TheAdapterScoresItsOwnTextBetter) {
  const std::string base_args = "perplexity -m " + baton::testing::demo_model().string() + " -f " +
                                baton::testing::demo_lora_heldout_text().string() +
                                " -t 2 --ctx 256 --json";
  const auto base = run_baton(base_args);
  const auto adapted = run_baton(base_args + " --lora " + baton::testing::demo_lora().string());
  ASSERT_EQ(base.exit_code, 0);
  ASSERT_EQ(adapted.exit_code, 0) << adapted.out;
  EXPECT_LT(nlohmann::json::parse(adapted.out).at("ppl").get<double>(),
            nlohmann::json::parse(base.out).at("ppl").get<double>() / 8);
  const auto two = run_baton(base_args + " --lora a=" + baton::testing::demo_lora().string() +
                                 " --lora b=" + baton::testing::demo_lora().string(),
                             Capture::kStderr);
  EXPECT_EQ(two.exit_code, 1);
  EXPECT_NE(two.out.find("one LoRA adapter at most"), std::string::npos) << two.out;
}

TEST_F(CliPerplexity, TooSmallContextAndUnreadableFileFailWithAMessage) {
  const auto small = run_baton(args("--ctx 8"), Capture::kStderr);
  EXPECT_EQ(small.exit_code, 1);
  EXPECT_NE(small.out.find("below the minimum of 16"), std::string::npos) << small.out;
  const auto missing = run_baton(
      "perplexity -m " + baton::testing::demo_model().string() + " -f /nonexistent/text.txt",
      Capture::kStderr);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("/nonexistent/text.txt"), std::string::npos) << missing.out;
}

}  // namespace
