// The load generator end to end against an in-process fake server with known timings.

#include "tools/bench_serve/load_generator.h"

#include <gtest/gtest.h>

#include "baton/error.h"
#include "tests/tools/bench_serve/fake_openai_server.h"
#include "tools/bench_serve/arrival_schedule.h"
#include "tools/bench_serve/report.h"

namespace baton::bench_serve {
namespace {

using baton::testing::FakeOpenAiServer;
using baton::testing::FakeServerOptions;

constexpr int32_t kOutputTokens = 8;
constexpr int32_t kPromptWords = 20;

LoadOptions options_for(const FakeOpenAiServer& server, bool stream, int32_t concurrency) {
  LoadOptions o;
  o.url = server.url();
  o.generation = {.model = "fake-model", .stream = stream};
  o.concurrency = concurrency;
  o.timeout_s = 10;
  return o;
}

std::vector<Prompt> prompts(int64_t count) {
  return random_prompts(count, kPromptWords, kOutputTokens, 1);
}

TEST(LoadGenerator, StreamingTimesFirstTokenAndGapsOfEveryRequest) {
  const FakeOpenAiServer server;  // first token after 30 ms, then one every 5 ms
  const LoadResult load = run_load(options_for(server, true, 4), prompts(12));
  ASSERT_EQ(load.requests.size(), 12u);
  EXPECT_EQ(server.requests(), 12);
  for (const RequestResult& r : load.requests) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.output_tokens, kOutputTokens);
    EXPECT_EQ(r.prompt_tokens, kPromptWords);
    EXPECT_GE(r.ttft_s, 0.025);
    EXPECT_LT(r.ttft_s, r.e2e_s);
    ASSERT_EQ(r.itl_s.size(), static_cast<size_t>(kOutputTokens - 1));
    EXPECT_GE(r.e2e_s - r.ttft_s, 0.8 * 0.005 * (kOutputTokens - 1));
  }
  const BenchReport report = make_report({.stream = true}, load);
  EXPECT_EQ(report.completed, 12);
  EXPECT_EQ(report.total_output_tokens, 12 * kOutputTokens);
  // Tokens are 5 ms apart; the upper bounds only allow for a loaded machine.
  EXPECT_GT(report.itl_ms.mean, 4);
  EXPECT_LT(report.itl_ms.mean, 50);
  EXPECT_GT(report.tpot_ms.mean, 4);
  EXPECT_LT(report.tpot_ms.mean, 50);
  EXPECT_GT(report.output_tokens_per_s, 0);
}

TEST(LoadGenerator, NonStreamingTakesTokensFromUsage) {
  const FakeOpenAiServer server;
  const LoadResult load = run_load(options_for(server, false, 2), prompts(4));
  for (const RequestResult& r : load.requests) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.output_tokens, kOutputTokens);
    EXPECT_EQ(r.prompt_tokens, kPromptWords);
    EXPECT_GE(r.e2e_s, 0.03);
    EXPECT_TRUE(r.itl_s.empty());
  }
}

TEST(LoadGenerator, ChatStreamIgnoresTheRoleOnlyChunk) {
  const FakeOpenAiServer server;
  LoadOptions o = options_for(server, true, 2);
  o.endpoint = "/v1/chat/completions";
  const LoadResult load = run_load(o, prompts(2));
  for (const RequestResult& r : load.requests) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_GE(r.ttft_s, 0.025) << "the role chunk, sent at once, counted as the first token";
    EXPECT_EQ(r.output_tokens, kOutputTokens);
  }
}

TEST(LoadGenerator, StreamWithoutUsageCountsTextChunks) {
  const FakeOpenAiServer server({.send_usage = false});
  const LoadResult load = run_load(options_for(server, true, 1), prompts(2));
  for (const RequestResult& r : load.requests) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.output_tokens, kOutputTokens);
    EXPECT_EQ(r.prompt_tokens, -1);
  }
}

TEST(LoadGenerator, ServerErrorsAreCountedWithTheirMessage) {
  const FakeOpenAiServer server({.fail_every = 3});
  for (const bool stream : {true, false}) {
    const LoadResult load = run_load(options_for(server, stream, 3), prompts(9));
    const BenchReport report = make_report({.stream = stream}, load);
    EXPECT_EQ(report.completed, 6);
    EXPECT_EQ(report.failed, 3);
    EXPECT_NE(report.first_error.find("HTTP 500"), std::string::npos) << report.first_error;
    EXPECT_NE(report.first_error.find("fake failure"), std::string::npos) << report.first_error;
  }
}

TEST(LoadGenerator, RefusedConnectionsAreFailedRequests) {
  LoadOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(baton::testing::closed_port());
  o.concurrency = 2;
  const LoadResult load = run_load(o, prompts(3));
  for (const RequestResult& r : load.requests) {
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("request failed"), std::string::npos) << r.error;
  }
}

TEST(LoadGenerator, ConcurrencyCapsRequestsInFlight) {
  const FakeOpenAiServer server;
  const LoadResult load = run_load(options_for(server, true, 2), prompts(8));
  EXPECT_EQ(server.max_in_flight(), 2);
  for (const RequestResult& r : load.requests) EXPECT_TRUE(r.ok) << r.error;
}

TEST(LoadGenerator, RequestRateSpacesTheArrivals) {
  const FakeOpenAiServer server({.first_token_delay = std::chrono::milliseconds(1),
                                 .token_interval = std::chrono::milliseconds(1)});
  LoadOptions o = options_for(server, false, 8);
  o.request_rate = 40;
  o.seed = 5;
  const LoadResult load = run_load(o, prompts(10));
  const double last_arrival = arrival_offsets(10, o.request_rate, o.seed).back();
  EXPECT_GE(load.duration_s, last_arrival);
  EXPECT_LT(load.duration_s, last_arrival + 1.0);
}

TEST(LoadGenerator, ProbeFindsTheModelOrNamesTheUnreachableUrl) {
  const FakeOpenAiServer server;
  EXPECT_EQ(probe_server(options_for(server, false, 1)), "fake-model");
  LoadOptions down;
  down.url = "http://127.0.0.1:" + std::to_string(baton::testing::closed_port());
  try {
    probe_server(down);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot reach the server at " + down.url),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace baton::bench_serve
