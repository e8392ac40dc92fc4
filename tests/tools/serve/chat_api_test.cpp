#include "baton/llm.h"
#include "tests/models/greedy_params.h"
#include "tests/tools/serve/serve_test_support.h"

namespace baton::testing {
namespace {

using nlohmann::json;

class ChatApi : public ServedModelTest {};

const json kMessages = json::array({{{"role", "system"}, {"content", "You tell stories."}},
                                    {{"role", "user"}, {"content", "Tell me about a cat."}}});

// The demo model's own template: the turns as plain lines after BOS.
std::string offline_chat_greedy(int32_t max_tokens) {
  LLM llm({.model = served_model().string(), .threads = 1});
  const ChatPrompt prompt =
      llm.chat_prompt({{"system", "You tell stories."}, {"user", "Tell me about a cat."}}, true);
  EXPECT_EQ(prompt.text, "<s>You tell stories.\nTell me about a cat.");
  Request r{.params = greedy(max_tokens), .prompt_tokens = prompt.tokens};
  return llm.generate(std::vector<Request>{r}).front().text;
}

TEST_F(ChatApi, GreedyChatMatchesOfflineGenerationOfTheTemplatedPrompt) {
  const HttpAnswer a = post_json(
      port(), "/v1/chat/completions",
      {{"model", "kjv-7m-f16"}, {"messages", kMessages}, {"max_tokens", 20}, {"temperature", 0}});
  ASSERT_EQ(a.status, 200) << a.body;
  const json body = a.json();
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_TRUE(body["id"].get<std::string>().starts_with("chatcmpl-"));
  const json& choice = body["choices"][0];
  EXPECT_EQ(choice["message"]["role"], "assistant");
  EXPECT_EQ(choice["message"]["content"], offline_chat_greedy(20));
  EXPECT_GT(body["usage"]["prompt_tokens"].get<int>(), 10);
}

TEST_F(ChatApi, ContentPartsAreJoinedAsText) {
  const json parts =
      json::array({{{"role", "system"},
                    {"content", json::array({{{"type", "text"}, {"text", "You tell "}},
                                             {{"type", "text"}, {"text", "stories."}}})}},
                   {{"role", "user"}, {"content", "Tell me about a cat."}}});
  const HttpAnswer a = post_json(port(), "/v1/chat/completions",
                                 {{"messages", parts}, {"max_tokens", 20}, {"temperature", 0}});
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.json()["choices"][0]["message"]["content"], offline_chat_greedy(20));
}

TEST_F(ChatApi, StreamOpensWithTheRoleThenContentDeltasFinishAndDone) {
  const StreamAnswer s = post_stream(port(), "/v1/chat/completions",
                                     {{"messages", kMessages},
                                      {"max_tokens", 20},
                                      {"temperature", 0},
                                      {"stream", true},
                                      {"stream_options", {{"include_usage", true}}}});
  ASSERT_EQ(s.status, 200);
  ASSERT_GE(s.events.size(), 4u) << s.raw;
  EXPECT_EQ(s.events.back(), "[DONE]");
  const json first = json::parse(s.events.front());
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  std::string text;
  std::string finish;
  for (size_t i = 0; i + 2 < s.events.size(); ++i) {
    const json choice = json::parse(s.events[i])["choices"][0];
    text += choice["delta"].value("content", "");
    if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
  }
  EXPECT_EQ(text, offline_chat_greedy(20));
  EXPECT_FALSE(finish.empty());
  EXPECT_GT(json::parse(s.events[s.events.size() - 2])["usage"]["completion_tokens"].get<int>(), 0);
}

TEST_F(ChatApi, LogprobsAndTopLogprobsFollowTheChatFormat) {
  const HttpAnswer a = post_json(port(), "/v1/chat/completions",
                                 {{"messages", kMessages},
                                  {"max_tokens", 4},
                                  {"temperature", 0},
                                  {"logprobs", true},
                                  {"top_logprobs", 2}});
  ASSERT_EQ(a.status, 200) << a.body;
  const json content = a.json()["choices"][0]["logprobs"]["content"];
  ASSERT_FALSE(content.empty()) << a.body;
  for (const json& token : content) {
    EXPECT_TRUE(token["token"].is_string());
    EXPECT_LE(token["logprob"].get<double>(), 0.0);
    EXPECT_TRUE(token["bytes"].is_array());
    EXPECT_EQ(token["top_logprobs"].size(), 2u);
  }
}

}  // namespace
}  // namespace baton::testing
