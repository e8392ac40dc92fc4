// `baton bench serve` end to end against the in-process fake server.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/tools/baton_command.h"
#include "tests/tools/bench_serve/fake_openai_server.h"

namespace {

using baton::testing::Capture;
using baton::testing::CommandResult;
using baton::testing::FakeOpenAiServer;
using baton::testing::run_baton;

TEST(BenchServeCli, PrintsThroughputAndLatencyTables) {
  const FakeOpenAiServer server;
  const CommandResult r =
      run_baton("bench serve --url " + server.url() +
                " --requests 6 --concurrency 2 --prompt-tokens 10 --output-tokens 4 --stream");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("model fake-model, streaming, concurrency 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| requests completed | 6 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| mean prompt tokens | 10.0 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| mean output tokens | 4.0 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| TTFT |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| ITL |"), std::string::npos) << r.out;
}

TEST(BenchServeCli, JsonIsOneObjectWithTheFigures) {
  const FakeOpenAiServer server;
  const CommandResult r = run_baton("bench serve --url " + server.url() +
                                    " --requests 4 --prompt-tokens 12 --output-tokens 3 --json "
                                    "--model chosen --endpoint /v1/chat/completions --stream");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "chosen");
  EXPECT_EQ(j["completed"], 4);
  EXPECT_EQ(j["failed"], 0);
  EXPECT_EQ(j["mean_prompt_tokens"], 12.0);
  EXPECT_EQ(j["total_output_tokens"], 12);
  EXPECT_GT(j["ttft_ms"]["p50"].get<double>(), 0);
  EXPECT_LT(j["ttft_ms"]["mean"].get<double>(), j["e2e_ms"]["mean"].get<double>());
}

TEST(BenchServeCli, UnreachableServerExitsOneNamingTheUrl) {
  const std::string url = "http://127.0.0.1:" + std::to_string(baton::testing::closed_port());
  const CommandResult r = run_baton("bench serve --url " + url, Capture::kStdoutAndStderr);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("cannot reach the server at " + url), std::string::npos) << r.out;
}

TEST(BenchServeCli, EveryRequestFailingExitsOneWithTheError) {
  const FakeOpenAiServer server({.fail_every = 1});
  const CommandResult r =
      run_baton("bench serve --url " + server.url() + " --requests 2 --output-tokens 2");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("| requests failed | 2 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first error: HTTP 500"), std::string::npos) << r.out;
}

}  // namespace
