#include <set>

#include "baton/llm.h"
#include "tests/models/greedy_params.h"
#include "tests/tools/serve/serve_test_support.h"

namespace baton::testing {
namespace {

using nlohmann::json;

class CompletionsApi : public ServedModelTest {};

TEST_F(CompletionsApi, GreedyCompletionMatchesOfflineGenerationWithUsage) {
  const HttpAnswer a = post_json(port(), "/v1/completions",
                                 {{"model", "kjv-7m-f16"},
                                  {"prompt", "Once upon a time"},
                                  {"max_tokens", 24},
                                  {"temperature", 0}});
  ASSERT_EQ(a.status, 200) << a.body;
  const json body = a.json();
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_TRUE(body["id"].get<std::string>().starts_with("cmpl-"));
  EXPECT_EQ(body["model"], "kjv-7m-f16");
  ASSERT_EQ(body["choices"].size(), 1u);
  EXPECT_EQ(body["choices"][0]["text"], offline_greedy("Once upon a time", 24));
  EXPECT_EQ(body["choices"][0]["index"], 0);
  const json& usage = body["usage"];
  EXPECT_GT(usage["prompt_tokens"].get<int>(), 3);
  EXPECT_EQ(usage["total_tokens"].get<int>(),
            usage["prompt_tokens"].get<int>() + usage["completion_tokens"].get<int>());
  EXPECT_LE(usage["completion_tokens"].get<int>(), 24);
  EXPECT_TRUE(usage["prompt_tokens_details"].contains("cached_tokens"));
}

TEST_F(CompletionsApi, SecondIdenticalPromptReportsCachedTokens) {
  const json request = {{"prompt", std::string(200, 'a')}, {"max_tokens", 2}, {"temperature", 0}};
  ASSERT_EQ(post_json(port(), "/v1/completions", request).status, 200);
  const HttpAnswer again = post_json(port(), "/v1/completions", request);
  ASSERT_EQ(again.status, 200);
  EXPECT_GT(again.json()["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), 0);
}

TEST_F(CompletionsApi, NSeededSamplesAreDistinctChoices) {
  const HttpAnswer a = post_json(
      port(), "/v1/completions",
      {{"prompt", "The dog"}, {"max_tokens", 16}, {"n", 3}, {"temperature", 1.0}, {"seed", 7}});
  ASSERT_EQ(a.status, 200) << a.body;
  const json choices = a.json()["choices"];
  ASSERT_EQ(choices.size(), 3u);
  std::set<std::string> texts;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(choices[i]["index"], i);
    texts.insert(choices[i]["text"].get<std::string>());
  }
  EXPECT_GT(texts.size(), 1u);
  EXPECT_GE(a.json()["usage"]["completion_tokens"].get<int>(), 3);
}

TEST_F(CompletionsApi, StopStringEndsTheTextBeforeIt) {
  const std::string full = offline_greedy("Once upon a time", 40);
  const size_t cut = full.find(' ', 10);
  ASSERT_NE(cut, std::string::npos);
  const std::string stop = full.substr(cut, 3);
  const HttpAnswer a = post_json(port(), "/v1/completions",
                                 {{"prompt", "Once upon a time"},
                                  {"max_tokens", 40},
                                  {"temperature", 0},
                                  {"stop", json::array({stop})}});
  ASSERT_EQ(a.status, 200) << a.body;
  const json choice = a.json()["choices"][0];
  EXPECT_EQ(choice["text"], full.substr(0, full.find(stop)));
  EXPECT_EQ(choice["finish_reason"], "stop");
}

TEST_F(CompletionsApi, SeveralPromptsAndTokenIdPromptsGiveOneChoiceEach) {
  const HttpAnswer a = post_json(port(), "/v1/completions",
                                 {{"prompt", json::array({"Once upon a time", "The cat"})},
                                  {"max_tokens", 8},
                                  {"temperature", 0}});
  ASSERT_EQ(a.status, 200) << a.body;
  const json choices = a.json()["choices"];
  ASSERT_EQ(choices.size(), 2u);
  EXPECT_EQ(choices[0]["text"], offline_greedy("Once upon a time", 8));
  EXPECT_EQ(choices[1]["text"], offline_greedy("The cat", 8));

  LLM llm({.model = served_model().string(), .threads = 1});
  const std::vector<int32_t> ids = llm.tokenize("The cat", true, false);
  const HttpAnswer by_ids = post_json(port(), "/v1/completions",
                                      {{"prompt", ids}, {"max_tokens", 8}, {"temperature", 0}});
  ASSERT_EQ(by_ids.status, 200) << by_ids.body;
  EXPECT_EQ(by_ids.json()["choices"][0]["text"], choices[1]["text"]);
}

TEST_F(CompletionsApi, LogprobsListEachTokenWithItsAlternatives) {
  const HttpAnswer a = post_json(
      port(), "/v1/completions",
      {{"prompt", "Once upon a time"}, {"max_tokens", 5}, {"temperature", 0}, {"logprobs", 3}});
  ASSERT_EQ(a.status, 200) << a.body;
  const json lp = a.json()["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 5u);
  ASSERT_EQ(lp["token_logprobs"].size(), 5u);
  ASSERT_EQ(lp["top_logprobs"].size(), 5u);
  std::string joined;
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_LE(lp["token_logprobs"][i].get<double>(), 0.0);
    EXPECT_EQ(lp["text_offset"][i].get<size_t>(), joined.size());
    joined += lp["tokens"][i].get<std::string>();
    EXPECT_LE(lp["top_logprobs"][i].size(), 3u);
    EXPECT_GE(lp["top_logprobs"][i].size(), 1u);
  }
}

TEST_F(CompletionsApi, LogprobsZeroGivesTheChosenTokensWithoutAlternatives) {
  const HttpAnswer a = post_json(
      port(), "/v1/completions",
      {{"prompt", "Once upon a time"}, {"max_tokens", 3}, {"temperature", 0}, {"logprobs", 0}});
  ASSERT_EQ(a.status, 200) << a.body;
  const json lp = a.json()["choices"][0]["logprobs"];
  ASSERT_EQ(lp["token_logprobs"].size(), 3u);
  for (const json& top : lp["top_logprobs"]) EXPECT_TRUE(top.empty());
  EXPECT_TRUE(post_json(port(), "/v1/completions", {{"prompt", "a"}, {"max_tokens", 3}})
                  .json()["choices"][0]["logprobs"]
                  .is_null());
}

TEST_F(CompletionsApi, StreamSendsChunksBeforeTheEndThenFinishUsageAndDone) {
  const StreamAnswer s = post_stream(port(), "/v1/completions",
                                     {{"prompt", "Once upon a time"},
                                      {"max_tokens", 200},
                                      {"ignore_eos", true},
                                      {"temperature", 0},
                                      {"stream", true},
                                      {"stream_options", {{"include_usage", true}}}});
  ASSERT_EQ(s.status, 200);
  ASSERT_GE(s.events.size(), 4u);
  EXPECT_EQ(s.events.back(), "[DONE]");
  // Tokens were flushed as they were made, not in one write at the end.
  EXPECT_GT(s.reads.size(), 2u);
  EXPECT_LT(s.reads.front(), s.reads.back());
  std::string text;
  std::string finish;
  for (size_t i = 0; i + 2 < s.events.size(); ++i) {
    const json chunk = json::parse(s.events[i]);
    EXPECT_EQ(chunk["object"], "text_completion");
    text += chunk["choices"][0]["text"].get<std::string>();
    if (!chunk["choices"][0]["finish_reason"].is_null())
      finish = chunk["choices"][0]["finish_reason"];
  }
  EXPECT_EQ(finish, "length");
  const json usage_chunk = json::parse(s.events[s.events.size() - 2]);
  EXPECT_TRUE(usage_chunk["choices"].empty());
  EXPECT_EQ(usage_chunk["usage"]["completion_tokens"], 200);
  EXPECT_EQ(text, offline_greedy("Once upon a time", 200, /*ignore_eos=*/true));
}

TEST_F(CompletionsApi, EchoPrependsThePrompt) {
  const HttpAnswer a = post_json(
      port(), "/v1/completions",
      {{"prompt", "Once upon a time"}, {"max_tokens", 6}, {"temperature", 0}, {"echo", true}});
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.json()["choices"][0]["text"],
            "Once upon a time" + offline_greedy("Once upon a time", 6));
}

}  // namespace
}  // namespace baton::testing
