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

// Genesis 1:1-12 (King James Version, public domain): 399 tokens of the demo model, three
// windows of 128.
constexpr const char* kGenesis =
    "In the beginning God created the heaven and the earth.\n"
    "And the earth was without form, and void; and darkness was upon the face of the deep. And the "
    "Spirit of God moved upon the face of the waters.\n"
    "And God said, Let there be light: and there was light.\n"
    "And God saw the light, that it was good: and God divided the light from the darkness.\n"
    "And God called the light Day, and the darkness he called Night. And the evening and the "
    "morning were the first day.\n"
    "And God said, Let there be a firmament in the midst of the waters, and let it divide the "
    "waters from the waters.\n"
    "And God made the firmament, and divided the waters which were under the firmament from the "
    "waters which were above the firmament: and it was so.\n"
    "And God called the firmament Heaven. And the evening and the morning were the second day.\n"
    "And God said, Let the waters under the heaven be gathered together unto one place, and let "
    "the dry land appear: and it was so.\n"
    "And God called the dry land Earth; and the gathering together of the waters called he Seas: "
    "and God saw that it was good.\n"
    "And God said, Let the earth bring forth grass, the herb yielding seed, and the fruit tree "
    "yielding fruit after his kind, whose seed is in itself, upon the earth: and it was so.\n"
    "And the earth brought forth grass, and herb yielding seed after his kind, and the tree "
    "yielding fruit, whose seed was in itself, after his kind: and God saw that it was good.\n";

class CliPerplexity : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(text_.path()) << kGenesis; }
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
