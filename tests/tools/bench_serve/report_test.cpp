#include "tools/bench_serve/report.h"

#include <gtest/gtest.h>

#include <limits>

namespace baton::bench_serve {
namespace {

RequestResult done(double ttft_s, double e2e_s, int64_t prompt, int64_t output,
                   std::vector<double> itl_s) {
  return {.ok = true,
          .ttft_s = ttft_s,
          .e2e_s = e2e_s,
          .itl_s = std::move(itl_s),
          .prompt_tokens = prompt,
          .output_tokens = output};
}

// Two completed streamed requests and one failure over 2 s:
//   A: TTFT 0.1 s, e2e 0.5 s, 5 output tokens -> TPOT 0.1 s; gaps 0.1 s x 4
//   B: TTFT 0.3 s, e2e 0.9 s, 3 output tokens -> TPOT 0.3 s; gaps 0.2 s, 0.4 s
LoadResult two_done_one_failed() {
  LoadResult load{.duration_s = 2};
  load.requests.push_back(done(0.1, 0.5, 10, 5, {0.1, 0.1, 0.1, 0.1}));
  load.requests.push_back({.error = "HTTP 500: boom"});
  load.requests.push_back(done(0.3, 0.9, 20, 3, {0.2, 0.4}));
  return load;
}

const RunDescription kStreamRun{.url = "http://h:1",
                                .endpoint = "/v1/completions",
                                .model = "m",
                                .stream = true,
                                .concurrency = 2,
                                .request_rate = std::numeric_limits<double>::infinity()};

TEST(Report, RatesAndTokenTotalsAreOverTheRunDuration) {
  const BenchReport r = make_report(kStreamRun, two_done_one_failed());
  EXPECT_EQ(r.completed, 2);
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.first_error, "HTTP 500: boom");
  EXPECT_DOUBLE_EQ(r.requests_per_s, 1.0);
  EXPECT_EQ(r.total_output_tokens, 8);
  EXPECT_DOUBLE_EQ(r.output_tokens_per_s, 4.0);
  EXPECT_DOUBLE_EQ(r.total_tokens_per_s, 19.0);
  ASSERT_TRUE(r.mean_prompt_tokens);
  EXPECT_DOUBLE_EQ(*r.mean_prompt_tokens, 15.0);
  EXPECT_DOUBLE_EQ(r.mean_output_tokens, 4.0);
}

TEST(Report, LatenciesFollowTheVllmDefinitions) {
  const BenchReport r = make_report(kStreamRun, two_done_one_failed());
  EXPECT_NEAR(r.ttft_ms.mean, 200, 1e-9);
  EXPECT_NEAR(r.tpot_ms.mean, 200, 1e-9);
  EXPECT_NEAR(r.tpot_ms.p50, 200, 1e-9);
  EXPECT_EQ(r.itl_ms.count, 6u);
  EXPECT_NEAR(r.itl_ms.mean, 1000.0 / 6, 1e-9);
  EXPECT_NEAR(r.itl_ms.p50, 100, 1e-9);
  EXPECT_NEAR(r.e2e_ms.p90, 860, 1e-9);
}

TEST(Report, WithoutStreamingOnlyEndToEndIsMeasured) {
  RunDescription run = kStreamRun;
  run.stream = false;
  const BenchReport r = make_report(run, two_done_one_failed());
  EXPECT_EQ(r.ttft_ms.count, 0u);
  EXPECT_EQ(r.e2e_ms.count, 2u);
  const nlohmann::json j = report_json(r);
  EXPECT_TRUE(j["ttft_ms"].is_null());
  EXPECT_TRUE(j["request_rate"].is_null());
  EXPECT_EQ(j["e2e_ms"]["count"], 2);
  const std::string table = format_table(r);
  EXPECT_EQ(table.find("| TTFT |"), std::string::npos) << table;
  EXPECT_NE(table.find("| e2e | 700.00 | 700.00 | 860.00 | 896.00 |"), std::string::npos) << table;
}

TEST(Report, TableShowsCountsAndTheFirstError) {
  const std::string table = format_table(make_report(kStreamRun, two_done_one_failed()));
  EXPECT_NE(table.find("| requests completed | 2 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| requests failed | 1 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| mean prompt tokens | 15.0 |"), std::string::npos) << table;
  EXPECT_NE(table.find("first error: HTTP 500: boom"), std::string::npos) << table;
  EXPECT_NE(table.find("| TTFT | 200.00 |"), std::string::npos) << table;
}

TEST(Report, ServerWithoutUsageLeavesPromptTokensUnknown) {
  LoadResult load{.duration_s = 1};
  load.requests.push_back(done(0.1, 0.2, -1, 2, {0.1}));
  const BenchReport r = make_report(kStreamRun, load);
  EXPECT_FALSE(r.mean_prompt_tokens);
  EXPECT_TRUE(report_json(r)["mean_prompt_tokens"].is_null());
  EXPECT_NE(format_table(r).find("| mean prompt tokens | not reported |"), std::string::npos);
}

}  // namespace
}  // namespace baton::bench_serve
