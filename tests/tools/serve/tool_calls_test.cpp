// Tool calls on the chat route: with tool_choice required or a named function the reply is
// always message.tool_calls naming an offered tool with arguments that fit its parameters
// (sampled at temperature 1, so only the grammar can make them fit); with auto it is that or a
// plain answer; streamed replies carry the same; a conversation with calls and their results
// goes back in; malformed tools are refused naming the field.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/tools/serve/serve_test_support.h"

namespace baton::testing {
namespace {

using nlohmann::json;

const json kWeather = {{"type", "function"},
                       {"function",
                        {{"name", "get_weather"},
                         {"parameters",
                          {{"type", "object"},
                           {"properties",
                            {{"city", {{"type", "string"}, {"maxLength", 12}}},
                             {"unit", {{"enum", {"celsius", "fahrenheit"}}}}}},
                           {"required", {"city", "unit"}},
                           {"additionalProperties", false}}}}}};
const json kAdd = {{"type", "function"},
                   {"function",
                    {{"name", "add"},
                     {"parameters",
                      {{"type", "object"},
                       {"properties",
                        {{"a", {{"type", "integer"}, {"minimum", 0}, {"maximum", 99}}},
                         {"b", {{"type", "integer"}, {"minimum", 0}, {"maximum", 99}}}}},
                       {"required", {"a", "b"}}}}}}};

json chat(const json& extra) {
  json body = {{"messages", json::array({{{"role", "user"}, {"content", "Jerusalem?"}}})},
               {"tools", {kWeather, kAdd}},
               {"max_tokens", 200},
               {"temperature", 1.0}};
  body.update(extra);
  return body;
}

// A tool call as OpenAI writes it, checked against the tools above.
void expect_valid_call(const json& call) {
  SCOPED_TRACE(call.dump());
  EXPECT_EQ(call["type"], "function");
  EXPECT_TRUE(call["id"].is_string() && !call["id"].get<std::string>().empty());
  const std::string name = call["function"]["name"];
  const json arguments = json::parse(call["function"]["arguments"].get<std::string>());
  if (name == "get_weather") {
    EXPECT_TRUE(arguments["city"].is_string());
    EXPECT_TRUE(arguments["unit"] == "C" || arguments["unit"] == "F");
    EXPECT_EQ(arguments.size(), 2u);
  } else {
    ASSERT_EQ(name, "add");
    EXPECT_TRUE(arguments["a"].is_number_integer() && arguments["b"].is_number_integer());
  }
}

// The tools' descriptions do not fit the demo model's trained context of 256 tokens beside a
// conversation: run it with 1024. The replies' shape is what is checked, and only the grammar
// decides that.
class ToolCalls : public ServedModelTest {
 protected:
  serve::ServeOptions options() const override {
    serve::ServeOptions o;
    o.model.context_size = 1024;
    return o;
  }
};

// parallel_tool_calls false keeps the demo model, which repeats itself, to one call that ends.
TEST_F(ToolCalls, RequiredAndNamedChoicesAlwaysCallAnOfferedTool) {
  for (int seed = 0; seed < 4; ++seed) {
    const HttpAnswer a = post_json(
        port(), "/v1/chat/completions",
        chat({{"tool_choice", "required"}, {"seed", seed}, {"parallel_tool_calls", false}}));
    ASSERT_EQ(a.status, 200) << a.body;
    const json choice = a.json()["choices"][0];
    ASSERT_EQ(choice["finish_reason"], "tool_calls") << a.body;
    EXPECT_TRUE(choice["message"]["content"].is_null());
    ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u);
    for (const json& call : choice["message"]["tool_calls"]) expect_valid_call(call);
  }
  const HttpAnswer a =
      post_json(port(), "/v1/chat/completions",
                chat({{"tool_choice", {{"type", "function"}, {"function", {{"name", "add"}}}}}}));
  ASSERT_EQ(a.status, 200) << a.body;
  const json calls = a.json()["choices"][0]["message"]["tool_calls"];
  ASSERT_EQ(calls.size(), 1u) << a.body;
  EXPECT_EQ(calls[0]["function"]["name"], "add");
  expect_valid_call(calls[0]);
}

TEST_F(ToolCalls, AutoGivesACallOrAnAnswerAndParallelCallsCanBeTurnedOff) {
  std::set<std::string> reasons;
  for (int seed = 0; seed < 8; ++seed) {
    const HttpAnswer a = post_json(port(), "/v1/chat/completions",
                                   chat({{"seed", seed}, {"parallel_tool_calls", false}}));
    ASSERT_EQ(a.status, 200) << a.body;
    const json choice = a.json()["choices"][0];
    reasons.insert(choice["finish_reason"].get<std::string>());
    if (choice["finish_reason"] == "tool_calls") {
      ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << a.body;
      expect_valid_call(choice["message"]["tool_calls"][0]);
    } else if (choice["finish_reason"] == "stop") {
      EXPECT_TRUE(choice["message"]["content"].is_string()) << a.body;
      EXPECT_FALSE(choice["message"].contains("tool_calls")) << a.body;
    }
  }
  EXPECT_FALSE(reasons.empty());
  // tool_choice none: the tools are not offered, and the reply is free text.
  const HttpAnswer a =
      post_json(port(), "/v1/chat/completions", chat({{"tool_choice", "none"}, {"max_tokens", 8}}));
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_FALSE(a.json()["choices"][0]["message"].contains("tool_calls"));
}

TEST_F(ToolCalls, AStreamedReplyCarriesTheSameCalls) {
  const StreamAnswer stream = post_stream(port(), "/v1/chat/completions",
                                          chat({{"tool_choice", "required"},
                                                {"stream", true},
                                                {"seed", 2},
                                                {"parallel_tool_calls", false}}));
  ASSERT_EQ(stream.status, 200);
  json calls = json::array();
  std::string finish;
  for (const std::string& event : stream.events) {
    if (event == "[DONE]") continue;
    const json chunk = json::parse(event);
    for (const json& choice : chunk["choices"]) {
      if (choice["delta"].contains("tool_calls")) {
        for (const json& call : choice["delta"]["tool_calls"]) {
          EXPECT_EQ(call["index"], calls.size());
          calls.push_back(call);
        }
      }
      if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
    }
  }
  EXPECT_EQ(finish, "tool_calls");
  ASSERT_GE(calls.size(), 1u) << stream.raw;
  for (const json& call : calls) expect_valid_call(call);
}

TEST_F(ToolCalls, ACallAndItsResultGoBackIntoTheConversation) {
  json body = chat({{"tool_choice", "required"}, {"seed", 1}, {"parallel_tool_calls", false}});
  const HttpAnswer first = post_json(port(), "/v1/chat/completions", body);
  ASSERT_EQ(first.status, 200) << first.body;
  const json message = first.json()["choices"][0]["message"];
  body["messages"].push_back(message);
  body["messages"].push_back(
      {{"role", "tool"}, {"tool_call_id", message["tool_calls"][0]["id"]}, {"content", "42"}});
  body["tool_choice"] = "auto";
  const HttpAnswer second = post_json(port(), "/v1/chat/completions", body);
  EXPECT_EQ(second.status, 200) << second.body;
}

TEST_F(ToolCalls, ArgumentsNestedPastTheBoundStayText) {
  // Arguments arrive as text: nested deeper than any JSON the server reads, they are passed on
  // as that text, never parsed into a value whose recursion could overflow the stack.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  json body = chat({{"max_tokens", 4}});
  body["messages"].push_back({{"role", "assistant"},
                              {"content", nullptr},
                              {"tool_calls",
                               {{{"id", "c1"},
                                 {"type", "function"},
                                 {"function", {{"name", "add"}, {"arguments", deep}}}}}}});
  body["messages"].push_back({{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "4"}});
  const HttpAnswer a = post_json(port(), "/v1/chat/completions", body);
  EXPECT_TRUE(a.status == 200 || a.status == 400) << a.body.substr(0, 300);
}

TEST_F(ToolCalls, MalformedToolsAreRefusedNamingTheField) {
  struct Case {
    json extra;
    std::string param;
    std::string says;
  };
  json bad_name = kAdd;
  bad_name["function"]["name"] = "add numbers";
  json bad_schema = kAdd;
  bad_schema["function"]["parameters"]["properties"]["a"]["multipleOf"] = 2;
  const Case cases[] = {
      {{{"tools", json::array()}}, "tools", "non-empty"},
      {{{"tools", {{{"type", 5}}}}}, "tools[0]", "must be"},
      {{{"tools", {bad_name}}}, "tools[0].function.name", "letters, digits"},
      {{{"tools", {kAdd, bad_schema}}}, "tools[1].function.parameters", "'multipleOf'"},
      {{{"tool_choice", {{"type", "function"}, {"function", {{"name", "nope"}}}}}},
       "tool_choice",
       "not among the tools"},
      {{{"tool_choice", "always"}}, "tool_choice", "must be none, auto, required"},
      {{{"response_format", {{"type", "json_object"}}}}, "tools", "cannot be combined"},
      {{{"messages", json::array({{{"role", "assistant"}, {"tool_calls", {{{"id", "x"}}}}}})}},
       "messages[0].tool_calls",
       "must be an array"},
  };
  for (const Case& c : cases) {
    expect_refused(port(), "/v1/chat/completions", chat(c.extra), c.param, c.says);
  }
}

}  // namespace
}  // namespace baton::testing
