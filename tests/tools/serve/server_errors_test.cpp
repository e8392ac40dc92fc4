#include "tests/tools/serve/serve_test_support.h"

namespace baton::testing {
namespace {

using nlohmann::json;

class ServerErrors : public ::testing::Test {
 protected:
  void start(serve::ServeOptions options = {}) {
    server_ = std::make_unique<RunningServer>(std::move(options));
  }
  int port() const { return server_->port(); }

  std::unique_ptr<RunningServer> server_;
};

// An OpenAI-style error body naming `param`.
void expect_error(const HttpAnswer& a, int status, const std::string& param) {
  EXPECT_EQ(a.status, status) << a.body;
  ASSERT_FALSE(a.body.empty());
  const json body = a.json();
  ASSERT_TRUE(body.contains("error")) << a.body;
  EXPECT_FALSE(body["error"]["message"].get<std::string>().empty());
  EXPECT_TRUE(body["error"]["type"].is_string());
  if (!param.empty()) {
    EXPECT_EQ(body["error"]["param"], param) << a.body;
    EXPECT_NE(body["error"]["message"].get<std::string>().find(param), std::string::npos);
  }
}

TEST_F(ServerErrors, MalformedJsonIs400) {
  start();
  expect_error(post(port(), "/v1/completions", "{\"prompt\": \"hi\", "), 400, "");
  expect_error(post(port(), "/v1/chat/completions", "[1, 2]"), 400, "");
  // Found by tests/fuzz: a number beyond a double's range is not a syntax error to the JSON
  // library, and once escaped as a 500.
  expect_error(post(port(), "/v1/completions", "{\"prompt\": \"hi\", \"n\": 1E999}"), 400, "");
}

TEST_F(ServerErrors, WrongTypesAre400NamingTheField) {
  start();
  expect_error(post_json(port(), "/v1/completions", {{"prompt", "hi"}, {"max_tokens", "ten"}}), 400,
               "max_tokens");
  expect_error(post_json(port(), "/v1/completions", {{"prompt", "hi"}, {"temperature", "hot"}}),
               400, "temperature");
  expect_error(post_json(port(), "/v1/completions", {{"prompt", 42}}), 400, "prompt");
  expect_error(post_json(port(), "/v1/completions", {{"prompt", "hi"}, {"stream", "yes"}}), 400,
               "stream");
  expect_error(post_json(port(), "/v1/completions", {{"prompt", "hi"}, {"top_p", 1.5}}), 400,
               "top_p");
  expect_error(post_json(port(), "/v1/completions", {{"prompt", json::array({1, 2, 999999})}}), 400,
               "prompt");
  expect_error(post_json(port(), "/v1/chat/completions",
                         {{"messages", json::array({{{"role", "user"}, {"content", 5}}})}}),
               400, "messages[0].content");
}

TEST_F(ServerErrors, MissingPromptAndEmptyMessagesAre400) {
  start();
  expect_error(post_json(port(), "/v1/completions", {{"max_tokens", 4}}), 400, "prompt");
  expect_error(post_json(port(), "/v1/chat/completions", {{"messages", json::array()}}), 400,
               "messages");
  expect_error(post_json(port(), "/v1/chat/completions", {{"max_tokens", 4}}), 400, "messages");
}

TEST_F(ServerErrors, UnknownModelIs404NamingModel) {
  start();
  expect_error(post_json(port(), "/v1/completions", {{"prompt", "hi"}, {"model", "gpt-9"}}), 404,
               "model");
}

TEST_F(ServerErrors, MaxTokensBeyondTheContextIs400) {
  start();
  expect_error(post_json(port(), "/v1/completions", {{"prompt", "hi"}, {"max_tokens", 100000}}),
               400, "max_tokens");
  expect_error(post_json(port(), "/v1/completions", {{"prompt", std::string(4000, 'x')}}), 400,
               "prompt");
}

TEST_F(ServerErrors, UnknownRouteIs404WithAnErrorBody) {
  start();
  expect_error(post_json(port(), "/v1/embeddings", {{"input", "hi"}}), 404, "");
}

TEST_F(ServerErrors, WrongOrMissingApiKeyIs401) {
  start({.api_key = "sekrit"});
  const json request = {{"prompt", "hi"}, {"max_tokens", 2}};
  expect_error(post_json(port(), "/v1/completions", request), 401, "");
  expect_error(post_json(port(), "/v1/completions", request, {{"Authorization", "Bearer nope"}}),
               401, "");
  EXPECT_EQ(get(port(), "/v1/models").status, 401);
  EXPECT_EQ(
      post_json(port(), "/v1/completions", request, {{"Authorization", "Bearer sekrit"}}).status,
      200);
  EXPECT_EQ(get(port(), "/health").status, 200);
}

TEST_F(ServerErrors, OversizedBodyIs413) {
  start({.max_body_bytes = 1024});
  expect_error(post_json(port(), "/v1/completions", {{"prompt", std::string(4096, 'a')}}), 413, "");
}

TEST_F(ServerErrors, FullQueueIs429WithRetryAfterAndOthersGoOn) {
  start({.max_queue = 1});
  std::atomic<bool> first_streaming{false};
  std::thread long_request([&] {
    const StreamAnswer s = post_stream(
        port(), "/v1/completions",
        {{"prompt", "Once"}, {"max_tokens", 200}, {"ignore_eos", true}, {"stream", true}},
        [&](const StreamAnswer&) {
          first_streaming = true;
          return true;
        });
    EXPECT_EQ(s.status, 200);
    EXPECT_EQ(s.events.back(), "[DONE]");
  });
  while (!first_streaming) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const HttpAnswer refused = post_json(port(), "/v1/completions", {{"prompt", "hi"}});
  expect_error(refused, 429, "");
  EXPECT_EQ(refused.headers.find("Retry-After")->second, "1");
  long_request.join();
  EXPECT_EQ(post_json(port(), "/v1/completions", {{"prompt", "hi"}, {"max_tokens", 2}}).status,
            200);
}

TEST_F(ServerErrors, StreamingWithBeamSearchIs400) {
  start();
  expect_error(post_json(port(), "/v1/completions",
                         {{"prompt", "hi"}, {"use_beam_search", true}, {"stream", true}}),
               400, "stream");
}

TEST_F(ServerErrors, ClientThatDisconnectsMidStreamIsAbortedAndItsBlocksFreed) {
  start();
  const StreamAnswer s = post_stream(
      port(), "/v1/completions",
      {{"prompt", "Once upon a time"}, {"max_tokens", 200}, {"ignore_eos", true}, {"stream", true}},
      [](const StreamAnswer& so_far) { return so_far.events.size() < 3; });
  EXPECT_GE(s.events.size(), 3u);
  // The server notices at its next write and aborts the request; the engine thread then frees
  // its KV blocks.
  std::string metrics;
  for (int i = 0; i < 500; ++i) {
    metrics = get(port(), "/metrics").body;
    if (metric_value(metrics, "baton_num_requests_in_flight") == 0 &&
        metric_value(metrics, "baton_kv_cache_usage_ratio") == 0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(metric_value(metrics, "baton_num_requests_in_flight"), 0);
  EXPECT_EQ(metric_value(metrics, "baton_kv_cache_usage_ratio"), 0);
  EXPECT_NE(metrics.find("baton_request_success_total{finished_reason=\"abort\"} 1"),
            std::string::npos)
      << metrics;
}

TEST_F(ServerErrors, StreamingClientThatLeavesWhileQueuedIsNoticedByKeepAlive) {
  // One sequence a step, so the second request waits; the first (64 samples of 240 tokens)
  // runs far longer than the test needs it to.
  start({.model = {.max_seqs = 1}});
  const auto metrics = [&] { return get(port(), "/metrics").body; };
  std::atomic<bool> stop_first{false};
  std::thread first([&] {
    post_stream(port(), "/v1/completions",
                {{"prompt", "Once"},
                 {"n", 64},
                 {"max_tokens", 240},
                 {"ignore_eos", true},
                 {"stream", true}},
                [&](const StreamAnswer&) { return !stop_first; });
  });
  while (metric_value(metrics(), "baton_num_requests_in_flight") != 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const StreamAnswer queued =
      post_stream(port(), "/v1/completions",
                  {{"prompt", "hi"}, {"max_tokens", 200}, {"ignore_eos", true}, {"stream", true}},
                  [](const StreamAnswer& so_far) {
                    return so_far.raw.find(": keep-alive") == std::string::npos;
                  });
  EXPECT_NE(queued.raw.find(": keep-alive"), std::string::npos);
  EXPECT_TRUE(queued.events.empty()) << "it was still queued, with no token yet";
  const std::string aborted = "baton_request_success_total{finished_reason=\"abort\"} 1";
  std::string m = metrics();
  for (int i = 0; i < 2000 && m.find(aborted) == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    m = metrics();
  }
  EXPECT_NE(m.find(aborted), std::string::npos) << m;
  stop_first = true;
  first.join();
}

TEST_F(ServerErrors, BadRequestDoesNotDisturbOneInFlight) {
  start();
  std::thread good([&] {
    const HttpAnswer a = post_json(port(), "/v1/completions",
                                   {{"prompt", "Once upon a time"},
                                    {"max_tokens", 100},
                                    {"ignore_eos", true},
                                    {"temperature", 0}});
    EXPECT_EQ(a.status, 200);
    EXPECT_EQ(a.json()["usage"]["completion_tokens"], 100);
  });
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(post(port(), "/v1/completions", "{not json").status, 400);
  }
  good.join();
}

}  // namespace
}  // namespace baton::testing
