#include "tools/bench_serve/openai_protocol.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace baton::bench_serve {
namespace {

TEST(OpenAiProtocol, ChatEndpointsAreRecognised) {
  EXPECT_EQ(api_for_endpoint("/v1/chat/completions"), Api::kChatCompletions);
  EXPECT_EQ(api_for_endpoint("/v1/completions"), Api::kCompletions);
}

TEST(OpenAiProtocol, CompletionBodyAsksForUsageWhenStreaming) {
  const GenerationSettings s{.model = "m", .temperature = 0.5, .stream = true};
  const nlohmann::json j =
      nlohmann::json::parse(request_body(Api::kCompletions, s, {.text = "hi", .max_tokens = 7}));
  EXPECT_EQ(j["model"], "m");
  EXPECT_EQ(j["prompt"], "hi");
  EXPECT_EQ(j["max_tokens"], 7);
  EXPECT_EQ(j["temperature"], 0.5);
  EXPECT_EQ(j["ignore_eos"], true);
  EXPECT_EQ(j["stream"], true);
  EXPECT_EQ(j["stream_options"]["include_usage"], true);
}

TEST(OpenAiProtocol, ChatBodySendsOneUserMessageAndCanLeaveOutIgnoreEos) {
  const GenerationSettings s{.model = "m", .ignore_eos = false};
  const nlohmann::json j = nlohmann::json::parse(
      request_body(Api::kChatCompletions, s, {.text = "hi", .max_tokens = 3}));
  EXPECT_EQ(j["messages"], nlohmann::json::parse(R"([{"role":"user","content":"hi"}])"));
  EXPECT_FALSE(j.contains("prompt"));
  EXPECT_FALSE(j.contains("ignore_eos"));
  EXPECT_FALSE(j.contains("stream_options"));
}

TEST(OpenAiProtocol, ChunksWithTextAreTold) {
  EXPECT_TRUE(parse_stream_chunk(Api::kCompletions, R"({"choices":[{"text":"a"}]})").has_text);
  EXPECT_FALSE(parse_stream_chunk(Api::kCompletions, R"({"choices":[{"text":""}]})").has_text);
  EXPECT_TRUE(
      parse_stream_chunk(Api::kChatCompletions, R"({"choices":[{"delta":{"content":"a"}}]})")
          .has_text);
  EXPECT_TRUE(parse_stream_chunk(Api::kChatCompletions,
                                 R"({"choices":[{"delta":{"reasoning_content":"hm"}}]})")
                  .has_text);
  EXPECT_FALSE(parse_stream_chunk(Api::kChatCompletions,
                                  R"({"choices":[{"delta":{"role":"assistant","content":null}}]})")
                   .has_text);
}

TEST(OpenAiProtocol, UsageAndErrorChunksAreRead) {
  const StreamChunk usage = parse_stream_chunk(
      Api::kCompletions, R"({"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4}})");
  ASSERT_TRUE(usage.usage);
  EXPECT_EQ(usage.usage->prompt_tokens, 9);
  EXPECT_EQ(usage.usage->completion_tokens, 4);
  EXPECT_FALSE(parse_stream_chunk(Api::kCompletions, R"({"usage":null})").usage);
  EXPECT_EQ(parse_stream_chunk(Api::kCompletions, R"({"error":{"message":"boom"}})").error, "boom");
  EXPECT_THROW(parse_stream_chunk(Api::kCompletions, "{truncated"), std::invalid_argument);
}

TEST(OpenAiProtocol, ResponseUsageAndModelListAreRead) {
  const Usage u = parse_response_usage(R"({"usage":{"prompt_tokens":3,"completion_tokens":2}})");
  EXPECT_EQ(u.prompt_tokens, 3);
  EXPECT_EQ(u.completion_tokens, 2);
  EXPECT_EQ(parse_response_usage(R"({"choices":[]})").completion_tokens, -1);
  EXPECT_THROW(parse_response_usage("<html>"), std::invalid_argument);
  EXPECT_EQ(first_model_id(R"({"data":[{"id":"a"},{"id":"b"}]})"), "a");
  EXPECT_EQ(first_model_id(R"({"data":[]})"), std::nullopt);
  EXPECT_EQ(first_model_id("nope"), std::nullopt);
}

}  // namespace
}  // namespace baton::bench_serve
