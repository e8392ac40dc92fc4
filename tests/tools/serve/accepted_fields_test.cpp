// No request field is silently ignored (docs/serving.md, "Request fields"): every field of the
// OpenAI, vLLM and TGI request bodies is either honoured (200) or answered 400 naming the field
// and saying why. The tables list the fields of OpenAI's API reference for each route.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/tools/serve/serve_test_support.h"
#include "tools/request_json.h"
#include "tools/serve/accepted_fields.h"

namespace baton::testing {
namespace {

using nlohmann::json;

struct FieldCase {
  std::string field;  // set in the body (a path with '.' for nested objects)
  json value;
  int status;
  std::string says;  // part of the error message, for a refusal
};

void set_path(json& body, const std::string& path, const json& value) {
  json* at = &body;
  size_t start = 0;
  for (size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1) {
    at = &(*at)[path.substr(start, dot - start)];
  }
  (*at)[path.substr(start)] = value;
}

class AcceptedFields : public ServedModelTest {
 protected:
  void expect_cases(const std::string& route, const json& base,
                    const std::vector<FieldCase>& cases) {
    for (const FieldCase& c : cases) {
      json body = base;
      set_path(body, c.field, c.value);
      const HttpAnswer a = post_json(port(), route, body);
      EXPECT_EQ(a.status, c.status)
          << route << " " << c.field << " = " << c.value << ": " << a.body;
      if (c.says.empty() || a.status != c.status) continue;
      // OpenAI's error names the field in param; TGI's (422) is one message quoting it.
      const json error = a.json()["error"];
      const std::string message =
          error.is_string() ? error.get<std::string>() : error["message"].get<std::string>();
      if (!error.is_string()) {
        EXPECT_EQ(error["param"], c.field) << a.body;
      }
      EXPECT_NE(message.find("'" + c.field + "'"), std::string::npos) << a.body;
      EXPECT_NE(message.find(c.says), std::string::npos) << c.field << ": " << a.body;
    }
  }
};

constexpr const char* kLegacyFunctions = "use tools and tool_choice";
constexpr const char* kUnknown = "is not a field of";

TEST_F(AcceptedFields, ChatCompletionsHonoursOrRefusesEveryOpenAiField) {
  const json base = {{"messages", json::array({{{"role", "user"}, {"content", "Hi"}}})},
                     {"max_tokens", 2}};
  const json tool = {{"type", "function"},
                     {"function", {{"name", "f"}, {"parameters", {{"type", "object"}}}}}};
  expect_cases(
      "/v1/chat/completions", base,
      {
          // Honoured.
          {"model", "kjv", 404, ""},  // a name the server does not serve: 404, as vLLM answers
          {"frequency_penalty", 0.5, 200, ""},
          {"logprobs", true, 200, ""},
          {"top_logprobs", 2, 400, "needs \"logprobs\": true"},  // read, and checked
          {"max_completion_tokens", 2, 200, ""},
          {"n", 2, 200, ""},
          {"presence_penalty", 0.5, 200, ""},
          {"seed", 7, 200, ""},
          {"stop", json::array({"\n"}), 200, ""},
          {"stream", false, 200, ""},
          {"stream_options", {{"include_usage", true}}, 200, ""},
          {"temperature", 0.5, 200, ""},
          {"top_p", 0.9, 200, ""},
          {"user", "user-1", 200, ""},
          {"priority", 0, 200, ""},
          // Refused before it is queued: this server schedules first come, first served.
          {"priority", 3, 400, "--scheduling-policy priority"},
          {"grammar", R"(root ::= "yes" | "no")", 200, ""},
          {"grammar", "root ::= item", 400, "rule 'item' is not defined"},
          {"add_generation_prompt", true, 200, ""},
          {"top_k", 5, 200, ""},
          {"min_p", 0.1, 200, ""},
          {"repetition_penalty", 1.1, 200, ""},
          // Null is absent, and so is a value that asks for what Baton does anyway.
          {"response_format", nullptr, 200, ""},
          {"tool_choice", "none", 200, ""},
          {"store", false, 200, ""},
          {"modalities", json::array({"text"}), 200, ""},
          {"skip_special_tokens", true, 200, ""},
          {"include_stop_str_in_output", false, 200, ""},
          // Structured outputs (tests/tools/serve/structured_outputs_test.cpp checks the text).
          {"response_format", {{"type", "json_object"}}, 200, ""},
          {"response_format", {{"type", "text"}}, 200, ""},
          {"response_format",
           {{"type", "json_schema"},
            {"json_schema", {{"name", "n"}, {"schema", {{"type", "object"}}}}}},
           200,
           ""},
          {"guided_json", {{"type", "object"}}, 200, ""},
          {"guided_choice", json::array({"a", "b"}), 200, ""},
          {"guided_grammar", R"(root ::= "a")", 200, ""},
          {"guided_decoding_backend", "xgrammar", 200, ""},
          {"json_schema", {{"type", "object"}}, 200, ""},
          {"structured_outputs", {{"choice", json::array({"a", "b"})}}, 200, ""},
          // Refused, saying why.
          {"response_format.type", "yaml", 400, "must be text, json_object or json_schema"},
          {"guided_json", {{"type", "integer"}, {"multipleOf", 2}}, 400, "'multipleOf'"},
          {"guided_whitespace_pattern", " *", 400, "compact"},
          {"tools", json::array({tool}), 200, ""},  // tests/tools/serve/tool_calls_test.cpp
          {"tool_choice", "auto", 400, "needs tools"},
          {"parallel_tool_calls", true, 400, "needs tools"},
          {"functions", json::array({tool["function"]}), 400, kLegacyFunctions},
          {"function_call", "auto", 400, kLegacyFunctions},
          {"logit_bias", {{"1", 5}}, 400, "token biases are not applied"},
          {"audio", {{"voice", "alloy"}, {"format", "wav"}}, 400, "writes text only"},
          {"modalities", json::array({"text", "audio"}), 400, "writes text only"},
          {"prediction", {{"type", "content"}, {"content", "x"}}, 400, "predicted outputs"},
          {"store", true, 400, "does not store completions"},
          {"skip_special_tokens", false, 400, "can only be true"},
          {"include_stop_str_in_output", true, 400, "can only be false"},
          {"min_tokens", 4, 400, "no minimum output length"},
          {"metadata", {{"k", "v"}}, 400, kUnknown},
          {"service_tier", "auto", 400, kUnknown},
          {"reasoning_effort", "low", 400, kUnknown},
          {"web_search_options", json::object(), 400, kUnknown},
          {"no_such_field", 1, 400, "is not a field of POST /v1/chat/completions"},
          {"stream_options.continuous_usage_stats", true, 400, "is not a field of stream_options"},
      });
  // Fields of a message: role, content and the tool fields are honoured; name is refused.
  json named = base;
  named["messages"][0]["name"] = "alice";
  HttpAnswer a = post_json(port(), "/v1/chat/completions", named);
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_EQ(a.json()["error"]["param"], "messages[0].name") << a.body;
  named["messages"][0]["name"] = nullptr;
  EXPECT_EQ(post_json(port(), "/v1/chat/completions", named).status, 200);
  json tool_reply = base;
  tool_reply["messages"].push_back({{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "4"}});
  EXPECT_EQ(post_json(port(), "/v1/chat/completions", tool_reply).status, 200);
  tool_reply["messages"][1]["tool_call_id"] = 7;
  a = post_json(port(), "/v1/chat/completions", tool_reply);
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_EQ(a.json()["error"]["param"], "messages[1].tool_call_id") << a.body;
  // Refused before anything streams.
  json prioritized = base;
  prioritized["priority"] = 3;
  prioritized["stream"] = true;
  a = post_json(port(), "/v1/chat/completions", prioritized);
  EXPECT_EQ(a.status, 400) << a.body;
}

TEST_F(AcceptedFields, CompletionsHonoursOrRefusesEveryOpenAiField) {
  expect_cases("/v1/completions", {{"prompt", "In the beginning"}, {"max_tokens", 2}},
               {
                   {"model", "kjv", 404, ""},
                   {"stream_options", {{"include_usage", true}}, 200, ""},
                   {"best_of", 2, 200, ""},
                   {"echo", true, 200, ""},
                   {"frequency_penalty", 0.5, 200, ""},
                   {"logprobs", 2, 200, ""},
                   {"n", 2, 200, ""},
                   {"presence_penalty", 0.5, 200, ""},
                   {"seed", 7, 200, ""},
                   {"stop", "\n", 200, ""},
                   {"stream", false, 200, ""},
                   {"temperature", 0.5, 200, ""},
                   {"top_p", 0.9, 200, ""},
                   {"user", "user-1", 200, ""},
                   {"stop_token_ids", json::array({2}), 200, ""},
                   {"ignore_eos", true, 200, ""},
                   {"suffix", "amen", 400, "does not fill in the middle"},
                   {"logit_bias", {{"1", 5}}, 400, "token biases are not applied"},
                   {"guided_regex", "[a-z]+", 200, ""},
                   {"guided_regex", "(a", 400, "a group is not closed"},
                   {"prompt_logprobs", 1, 400, "prompt's logprobs"},
                   {"truncate_prompt_tokens", 8, 400, "refused, not truncated"},
                   {"no_such_field", 1, 400, "is not a field of POST /v1/completions"},
               });
}

TEST_F(AcceptedFields, VllmAndTgiGenerateHonourOrRefuseTheirFields) {
  expect_cases("/generate", {{"prompt", "In the beginning"}, {"max_tokens", 2}},
               {
                   {"temperature", 0.5, 200, ""},
                   {"stream", false, 200, ""},
                   {"guided_json", {{"type", "object"}}, 200, ""},
                   {"model", "x", 400, "is not a field of vLLM's POST /generate"},
               });
  // What TGI's Python client sends: every parameter, unset ones as null or off.
  const json tgi_client = {{"inputs", "In the beginning"},
                           {"stream", false},
                           {"parameters",
                            {{"best_of", nullptr},
                             {"decoder_input_details", false},
                             {"details", true},
                             {"do_sample", false},
                             {"frequency_penalty", nullptr},
                             {"grammar", nullptr},
                             {"max_new_tokens", 2},
                             {"repetition_penalty", nullptr},
                             {"return_full_text", nullptr},
                             {"seed", nullptr},
                             {"stop", json::array()},
                             {"temperature", nullptr},
                             {"top_k", nullptr},
                             {"top_n_tokens", nullptr},
                             {"top_p", nullptr},
                             {"truncate", nullptr},
                             {"typical_p", nullptr},
                             {"watermark", false},
                             {"adapter_id", nullptr}}}};
  expect_cases("/generate", tgi_client,
               {
                   {"parameters.details", false, 200, ""},
                   {"parameters.watermark", true, 422, "not watermarked"},
                   {"parameters.typical_p", 0.5, 422, "typical sampling"},
                   {"parameters.grammar", {{"type", "json"}, {"value", json::object()}}, 200, ""},
                   {"parameters.grammar", {{"type", "regex"}, {"value", "[0-9]+"}}, 200, ""},
                   {"parameters.grammar.type", "ebnf", 422, "json or regex"},
                   {"parameters.adapter_id", "sql", 422, "\"model\""},
                   {"parameters.truncate", 8, 422, "refused, not truncated"},
                   {"stream", true, 422, "must be false on /generate"},
                   {"no_such_field", 1, 422, "is not a field of TGI's generate"},
               });
}

TEST_F(AcceptedFields, GrammarShapesTheAnswer) {
  for (const char* route : {"/v1/completions", "/v1/chat/completions"}) {
    json body = {{"prompt", "Is it so?"},
                 {"messages", json::array({{{"role", "user"}, {"content", "Is it so?"}}})},
                 {"grammar", R"(root ::= ("yes" | "no") ".")"},
                 {"max_tokens", 8},
                 {"seed", 4}};
    body.erase(std::string(route) == "/v1/completions" ? "messages" : "prompt");
    const HttpAnswer a = post_json(port(), route, body);
    ASSERT_EQ(a.status, 200) << a.body;
    const json choice = a.json()["choices"][0];
    const std::string text =
        choice.contains("text") ? choice["text"] : choice["message"]["content"];
    EXPECT_TRUE(text == "yes." || text == "no.") << a.body;
    EXPECT_EQ(choice["finish_reason"], "stop") << a.body;
  }
}

TEST_F(AcceptedFields, AGrammarThatFailsMidwayFailsItsRequestAlone) {
  // A stream in flight beside it.
  std::atomic<bool> streaming = false;
  std::thread other([&] {
    const StreamAnswer answer = post_stream(port(), "/v1/completions",
                                            {{"prompt", "In the beginning"},
                                             {"max_tokens", 200},
                                             {"ignore_eos", true},
                                             {"stream", true}},
                                            [&](const StreamAnswer&) {
                                              streaming = true;
                                              return true;
                                            });
    EXPECT_EQ(answer.status, 200);
    ASSERT_FALSE(answer.events.empty());
    EXPECT_EQ(answer.events.back(), "[DONE]");
    EXPECT_EQ(answer.raw.find("error"), std::string::npos) << answer.raw;
  });
  while (!streaming) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // Parses and starts, but after "q" has 2^11 ways to go on: past the matcher's bound at the
  // first token, in the engine's step.
  std::string gbnf = "root ::= \"q\" r1\n";
  for (int i = 1; i <= 11; ++i) {
    gbnf += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + " \"b\" | r" +
            std::to_string(i + 1) + " \"c\"\n";
  }
  gbnf += "r12 ::= \"a\"\n";
  const HttpAnswer a =
      post_json(port(), "/v1/completions", {{"prompt", "x"}, {"max_tokens", 4}, {"grammar", gbnf}});
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_NE(a.body.find("too ambiguous"), std::string::npos) << a.body;
  other.join();
}

TEST(AcceptedFieldsPriority, VllmPrioritiesWhereTheServerSchedulesByThem) {
  serve::ServeOptions options;
  options.model.scheduling_policy = SchedulingPolicy::kPriority;
  const RunningServer server(options);
  const json body = {{"prompt", "In the beginning"}, {"max_tokens", 2}};
  for (const int64_t priority : {-5LL, 0LL, 7LL}) {
    json prioritized = body;
    prioritized["priority"] = priority;
    EXPECT_EQ(post_json(server.port(), "/v1/completions", prioritized).status, 200) << priority;
  }
  json huge = body;
  huge["priority"] = int64_t{1} << 40;
  EXPECT_EQ(post_json(server.port(), "/v1/completions", huge).status, 400);
}

TEST(AcceptedFieldsList, EverySharedFieldIsReadByTheRequestParser) {
  // A value of the wrong type is refused naming the field only where the parser reads it.
  for (const std::string_view name : cli::generation_fields()) {
    try {
      cli::generation_params_from_json({{std::string(name), {{"x", 1}}}}, {});
      ADD_FAILURE() << name << " is listed but not read";
    } catch (const cli::FieldError& e) {
      EXPECT_EQ(e.field(), name);
    }
  }
}

TEST(AcceptedFieldsList, ABodyOfEveryHonouredFieldPassesTheCheck) {
  for (const serve::RequestObject kind :
       {serve::RequestObject::kCompletions, serve::RequestObject::kChatCompletions,
        serve::RequestObject::kChatMessage, serve::RequestObject::kStreamOptions,
        serve::RequestObject::kVllmGenerate, serve::RequestObject::kTgiGenerate,
        serve::RequestObject::kTgiParameters, serve::RequestObject::kLoadLora,
        serve::RequestObject::kUnloadLora}) {
    json body = json::object();
    for (const std::string_view field : serve::honoured_fields(kind)) {
      body[std::string(field)] = 1;
    }
    EXPECT_NO_THROW(serve::refuse_unhonoured_fields(body, kind));
    EXPECT_FALSE(serve::honoured_fields(kind).empty());
  }
}

}  // namespace
}  // namespace baton::testing
