#include "baton/llm.h"
#include "tests/models/greedy_params.h"
#include "tests/tools/serve/serve_test_support.h"

namespace baton::testing {
namespace {

using nlohmann::json;

class NativeRoutes : public ServedModelTest {
 protected:
  serve::ServeOptions options() const override {
    return serve::ServeOptions{.served_model_name = "tiny"};
  }
};

TEST_F(NativeRoutes, ModelsListsTheServedName) {
  const HttpAnswer a = get(port(), "/v1/models");
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(a.json()["object"], "list");
  EXPECT_EQ(a.json()["data"][0]["id"], "tiny");
  EXPECT_EQ(a.json()["data"][0]["object"], "model");
  EXPECT_EQ(post_json(port(), "/v1/completions", {{"model", "tiny"}, {"prompt", "a"}}).status, 200);
}

TEST_F(NativeRoutes, HealthIsOk) {
  EXPECT_EQ(get(port(), "/health").status, 200);
}

TEST_F(NativeRoutes, MetricsExposeHistogramsGaugesAndCounters) {
  ASSERT_EQ(post_json(port(), "/v1/completions",
                      {{"prompt", "Once upon a time"}, {"max_tokens", 8}, {"ignore_eos", true}})
                .status,
            200);
  post(port(), "/v1/completions", "{bad");
  // Responses are counted once written, which may be just after the client has read them.
  HttpAnswer a = get(port(), "/metrics");
  for (int i = 0; i < 100 && a.body.find("code=\"400\"") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    a = get(port(), "/metrics");
  }
  ASSERT_EQ(a.status, 200);
  EXPECT_NE(a.headers.find("Content-Type")->second.find("text/plain"), std::string::npos);
  const std::string& m = a.body;
  for (const char* name :
       {"# TYPE baton_time_to_first_token_seconds histogram",
        "baton_time_to_first_token_seconds_bucket{le=\"+Inf\"} 1",
        "baton_time_to_first_token_seconds_count 1",
        "# TYPE baton_time_per_output_token_seconds histogram",
        "baton_e2e_request_latency_seconds_count 1", "# TYPE baton_num_requests_running gauge",
        "# TYPE baton_num_requests_waiting gauge", "# TYPE baton_kv_cache_usage_ratio gauge",
        "# TYPE baton_prefix_cache_hit_rate gauge", "baton_generation_tokens_total 8",
        "baton_request_success_total{finished_reason=\"length\"} 1",
        "baton_http_responses_total{code=\"400\"} 1"}) {
    EXPECT_NE(m.find(name), std::string::npos) << "missing: " << name << "\n" << m;
  }
  EXPECT_GT(metric_value(m, "baton_prompt_tokens_total"), 3);
}

TEST_F(NativeRoutes, VllmGenerateReturnsPromptPlusText) {
  const HttpAnswer a =
      post_json(port(), "/generate",
                {{"prompt", "Once upon a time"}, {"max_tokens", 12}, {"temperature", 0}});
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.json()["text"][0], "Once upon a time" + offline_greedy("Once upon a time", 12));
}

TEST_F(NativeRoutes, VllmGenerateStreamsCumulativeTextLines) {
  const StreamAnswer s = post_stream(
      port(), "/generate",
      {{"prompt", "Once upon a time"}, {"max_tokens", 12}, {"temperature", 0}, {"stream", true}});
  ASSERT_EQ(s.status, 200);
  std::vector<std::string> lines;
  for (size_t start = 0, end; (end = s.raw.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(s.raw.substr(start, end - start));
  }
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(json::parse(lines.back())["text"][0],
            "Once upon a time" + offline_greedy("Once upon a time", 12));
}

TEST_F(NativeRoutes, TgiGenerateIsGreedyByDefaultWithDetails) {
  const HttpAnswer a = post_json(port(), "/generate",
                                 {{"inputs", "Once upon a time"},
                                  {"parameters", {{"max_new_tokens", 10}, {"details", true}}}});
  ASSERT_EQ(a.status, 200) << a.body;
  const json body = a.json();
  EXPECT_EQ(body["generated_text"], offline_greedy("Once upon a time", 10));
  EXPECT_EQ(body["details"]["generated_tokens"].get<size_t>(), body["details"]["tokens"].size());
  EXPECT_TRUE(body["details"]["finish_reason"].is_string());
}

TEST_F(NativeRoutes, TgiGenerateStreamEndsWithTheGeneratedText) {
  const StreamAnswer s =
      post_stream(port(), "/generate_stream",
                  {{"inputs", "Once upon a time"}, {"parameters", {{"max_new_tokens", 10}}}});
  ASSERT_EQ(s.status, 200);
  ASSERT_FALSE(s.events.empty());
  std::string text;
  for (const std::string& e : s.events) {
    const json chunk = json::parse(e);
    EXPECT_TRUE(chunk["token"]["id"].is_number_integer());
    text += chunk["token"]["text"].get<std::string>();
  }
  const json last = json::parse(s.events.back());
  EXPECT_EQ(last["generated_text"], offline_greedy("Once upon a time", 10));
  EXPECT_EQ(text, last["generated_text"]);
}

TEST_F(NativeRoutes, TgiStreamWithoutInputsIs422) {
  const HttpAnswer a = post_json(port(), "/generate_stream", json::object());
  EXPECT_EQ(a.status, 422);
  EXPECT_NE(a.json()["error"].get<std::string>().find("inputs"), std::string::npos);
}

TEST_F(NativeRoutes, TgiValidationErrorIs422WithItsErrorBody) {
  const HttpAnswer a =
      post_json(port(), "/generate", {{"inputs", "hi"}, {"parameters", {{"temperature", 0}}}});
  EXPECT_EQ(a.status, 422);
  EXPECT_EQ(a.json()["error_type"], "validation");
}

TEST_F(NativeRoutes, PlaygroundPageIsServedAtTheRootAsHtml) {
  const HttpAnswer root = get(port(), "/");
  ASSERT_EQ(root.status, 200);
  EXPECT_EQ(root.headers.find("Content-Type")->second, "text/html; charset=utf-8");
  EXPECT_NE(root.body.find("<title>Baton Playground</title>"), std::string::npos);
  EXPECT_EQ(get(port(), "/index.html").body, root.body);
  const HttpAnswer script = get(port(), "/playground.js");
  ASSERT_EQ(script.status, 200);
  EXPECT_TRUE(script.headers.find("Content-Type")->second.starts_with("text/javascript"));
  EXPECT_NE(script.body.find("v1/chat/completions"), std::string::npos);
  const HttpAnswer style = get(port(), "/playground.css");
  ASSERT_EQ(style.status, 200);
  EXPECT_TRUE(style.headers.find("Content-Type")->second.starts_with("text/css"));
}

// The page must work offline and leak nothing: no CDN, no web fonts, no analytics.
TEST_F(NativeRoutes, PlaygroundReferencesNoExternalUrl) {
  for (const char* path : {"/", "/playground.js", "/playground.css"}) {
    const HttpAnswer a = get(port(), path);
    ASSERT_EQ(a.status, 200) << path;
    EXPECT_EQ(a.body.find("http://"), std::string::npos) << path;
    EXPECT_EQ(a.body.find("https://"), std::string::npos) << path;
    EXPECT_EQ(a.body.find("\"//"), std::string::npos) << path << ": a protocol-relative URL";
  }
}

class PlaygroundWithApiKey : public ServedModelTest {
 protected:
  serve::ServeOptions options() const override { return serve::ServeOptions{.api_key = "sekrit"}; }
};

TEST_F(PlaygroundWithApiKey, PageOpensWithoutTheKeyWhileTheApiNeedsIt) {
  const HttpAnswer page = get(port(), "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("id=\"api-key\""), std::string::npos);
  EXPECT_EQ(get(port(), "/playground.js").status, 200);
  EXPECT_EQ(get(port(), "/v1/models").status, 401);
  EXPECT_EQ(get(port(), "/v1/models", {{"Authorization", "Bearer sekrit"}}).status, 200);
}

}  // namespace
}  // namespace baton::testing
