// Structured outputs through the server: each API's constraint field shapes the text (sampled at
// temperature 1, so that only the constraint can make it conform), streaming included, and a
// malformed or conflicting constraint is a 400 naming the field. The schema corpus is validated
// with a real JSON Schema validator in structured_outputs_test.py.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "tests/tools/serve/serve_test_support.h"

namespace baton::testing {
namespace {

using nlohmann::json;

const json kPerson = {
    {"type", "object"},
    {"properties",
     {{"name", {{"type", "string"}, {"maxLength", 12}}},
      {"age", {{"type", "integer"}, {"minimum", 0}, {"maximum", 120}}},
      {"tags", {{"type", "array"}, {"items", {{"enum", {"a", "b"}}}}, {"maxItems", 3}}}}},
    {"required", {"name", "age"}},
    {"additionalProperties", false}};

void expect_person(const std::string& text) {
  SCOPED_TRACE(text);
  const json person = json::parse(text);  // throws, failing the test, on invalid JSON
  ASSERT_TRUE(person.is_object());
  ASSERT_TRUE(person.contains("name") && person["name"].is_string());
  EXPECT_LE(person["name"].get<std::string>().size(), 12u * 4);
  ASSERT_TRUE(person.contains("age") && person["age"].is_number_integer());
  EXPECT_GE(person["age"].get<int>(), 0);
  EXPECT_LE(person["age"].get<int>(), 120);
  for (const auto& [key, value] : person.items()) {
    EXPECT_TRUE(key == "name" || key == "age" || key == "tags") << key;
  }
}

json chat(const json& extra) {
  json body = {{"messages", json::array({{{"role", "user"}, {"content", "Who is he?"}}})},
               {"max_tokens", 120},
               {"temperature", 1.0}};
  body.update(extra);
  return body;
}

std::string chat_text(const HttpAnswer& a) {
  return a.json()["choices"][0]["message"]["content"].get<std::string>();
}

class StructuredOutputs : public ServedModelTest {};

TEST_F(StructuredOutputs, EveryApisSchemaFieldGivesValidJson) {
  const json format = {
      {"type", "json_schema"},
      {"json_schema", {{"name", "person"}, {"strict", true}, {"schema", kPerson}}}};
  for (const json& extra : {json{{"response_format", format}}, json{{"guided_json", kPerson}},
                            json{{"guided_json", kPerson.dump()}}, json{{"json_schema", kPerson}},
                            json{{"structured_outputs", {{"json", kPerson}}}}}) {
    for (int seed = 0; seed < 3; ++seed) {
      json body = chat(extra);
      body["seed"] = seed;
      const HttpAnswer a = post_json(port(), "/v1/chat/completions", body);
      ASSERT_EQ(a.status, 200) << a.body;
      ASSERT_EQ(a.json()["choices"][0]["finish_reason"], "stop") << a.body;
      expect_person(chat_text(a));
    }
  }
}

TEST_F(StructuredOutputs, PropertiesComeInTheSchemasOrder) {
  // Written z before a: the request body is parsed keeping that order.
  const std::string body = R"({"prompt": "The record:", "max_tokens": 60, "seed": 1,
      "guided_json": {"type": "object", "properties": {"zeta": {"type": "integer"},
      "alpha": {"type": "boolean"}}, "required": ["zeta", "alpha"]}})";
  httplib::Client client("127.0.0.1", port());
  const auto result = client.Post("/v1/completions", body, "application/json");
  ASSERT_TRUE(result);
  ASSERT_EQ(result->status, 200) << result->body;
  const std::string text = json::parse(result->body)["choices"][0]["text"];
  EXPECT_LT(text.find("zeta"), text.find("alpha")) << text;
}

TEST_F(StructuredOutputs, JsonObjectChoiceRegexAndTgiGrammar) {
  HttpAnswer a = post_json(port(), "/v1/chat/completions",
                           chat({{"response_format", {{"type", "json_object"}}}}));
  ASSERT_EQ(a.status, 200) << a.body;
  if (a.json()["choices"][0]["finish_reason"] == "stop") {
    EXPECT_TRUE(json::parse(chat_text(a)).is_object()) << a.body;
  }
  a = post_json(port(), "/v1/completions",
                {{"prompt", "Yea or nay?"},
                 {"guided_choice", {"yea", "nay", "it may be"}},
                 {"temperature", 1.0}});
  ASSERT_EQ(a.status, 200) << a.body;
  const std::string choice = a.json()["choices"][0]["text"];
  EXPECT_TRUE(choice == "yea" || choice == "nay" || choice == "it may be") << choice;
  a = post_json(port(), "/v1/completions",
                {{"prompt", "Chapter"},
                 {"guided_regex", "[1-9][0-9]?:[1-9][0-9]?"},
                 {"temperature", 1.0},
                 {"max_tokens", 20}});
  ASSERT_EQ(a.status, 200) << a.body;
  const std::string verse = a.json()["choices"][0]["text"];
  EXPECT_TRUE(std::regex_match(verse, std::regex("[1-9][0-9]?:[1-9][0-9]?"))) << verse;
  a = post_json(port(), "/generate",
                {{"inputs", "The record:"},
                 {"parameters",
                  {{"grammar", {{"type", "json"}, {"value", kPerson}}},
                   {"max_new_tokens", 120},
                   {"do_sample", true}}}});
  ASSERT_EQ(a.status, 200) << a.body;
  expect_person(a.json()["generated_text"]);
}

TEST_F(StructuredOutputs, StreamedAndParallelSamplesFollowTheSchema) {
  json body = chat({{"guided_json", kPerson}, {"stream", true}, {"seed", 5}});
  const StreamAnswer stream = post_stream(port(), "/v1/chat/completions", body);
  ASSERT_EQ(stream.status, 200);
  std::string text;
  for (const std::string& event : stream.events) {
    if (event == "[DONE]") continue;
    const json chunk = json::parse(event);
    for (const json& choice : chunk["choices"]) {
      if (choice["delta"].contains("content")) text += choice["delta"]["content"];
    }
  }
  expect_person(text);
  body = {{"prompt", "The record:"},
          {"guided_json", kPerson},
          {"max_tokens", 120},
          {"n", 3},
          {"best_of", 4},
          {"temperature", 1.0}};
  const HttpAnswer a = post_json(port(), "/v1/completions", body);
  ASSERT_EQ(a.status, 200) << a.body;
  const json reply = a.json();  // kept: the loop below must not iterate a temporary's member
  ASSERT_EQ(reply["choices"].size(), 3u);
  for (const json& choice : reply["choices"]) expect_person(choice["text"]);
}

TEST_F(StructuredOutputs, StopTokenIdsEndTheOutputOnlyWhereItIsComplete) {
  // Token 2 (the end of text) may end the JSON only once it is whole, ignore_eos or not.
  const HttpAnswer a = post_json(port(), "/v1/completions",
                                 {{"prompt", "The record:"},
                                  {"guided_json", kPerson},
                                  {"max_tokens", 120},
                                  {"ignore_eos", true},
                                  {"stop_token_ids", {2}},
                                  {"temperature", 1.0}});
  ASSERT_EQ(a.status, 200) << a.body;
  expect_person(a.json()["choices"][0]["text"]);
}

TEST_F(StructuredOutputs, BadOrConflictingConstraintsAreRefusedNamingTheField) {
  struct Case {
    json extra;
    std::string param;
    std::string says;
  };
  const Case cases[] = {
      {{{"guided_json", kPerson}, {"guided_regex", "a"}}, "guided_regex", "cannot be combined"},
      {{{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "x"}}}}}},
       "response_format.json_schema.schema",
       "is required"},
      {{{"response_format",
         {{"type", "json_schema"},
          {"json_schema",
           {{"name", "x"}, {"schema", {{"type", "string"}, {"format", "email"}}}}}}}},
       "response_format.json_schema.schema",
       "#/format"},
      {{{"guided_choice", json::array()}}, "guided_choice", "non-empty"},
      {{{"response_format", {{"type", 5}}}}, "response_format.type", "must be a string"},
      {{{"guided_regex", "(?=a)"}}, "guided_regex", "lookaround"},
      {{{"structured_outputs", {{"json", kPerson}, {"regex", "a"}}}},
       "structured_outputs",
       "exactly one"},
  };
  for (const Case& c : cases) {
    expect_refused(port(), "/v1/chat/completions", chat(c.extra), c.param, c.says);
  }
}

}  // namespace
}  // namespace baton::testing
