// A chat template is code from the model file: runaway loops, recursion, nesting and output stop
// at ChatTemplateLimits with an error naming the limit, never a hang, a crash or exhausted memory.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/core/formats/chat/chat_test_util.h"

namespace baton::testing {
namespace {

std::string limit_error(const std::string& source, const ChatTemplateLimits& limits = {}) {
  try {
    ChatTemplate(source, limits).render_ordered(Json::object());
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected a limit error from: " << source.substr(0, 80);
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ChatTemplateLimits, EndlessLoopStopsAtTheStepLimitQuickly) {
  const std::string nested_loops =
      "{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{% endfor %}{% endfor %}";
  const auto start = std::chrono::steady_clock::now();
  const std::string message = limit_error(nested_loops);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(contains(message, "steps (the chat template step limit)")) << message;
  EXPECT_TRUE(contains(message, "line 1")) << message;
  EXPECT_TRUE(contains(limit_error("{% for i in range(100000) %}{% for j in range(100000) %}"
                                   "{% endfor %}{% endfor %}"),
                       "(the chat template step limit)"));
  // The default step limit keeps a runaway render to a bounded time. The bound tells a missing
  // limit (10^10 steps: hours) from a present one, not a sanitizer build's speed: under ASan on
  // a 2-core host this render alone took 32 s.
  EXPECT_LT(seconds, 600.0);
}

TEST(ChatTemplateLimits, StepLimitIsConfigurable) {
  const std::string loop = "{% for i in range(50) %}{{ i }}{% endfor %}";
  EXPECT_NO_THROW(ChatTemplate(loop, {.max_steps = 1000}).render(nlohmann::json::object()));
  EXPECT_TRUE(contains(limit_error(loop, {.max_steps = 60}), "past 60 steps"));
}

TEST(ChatTemplateLimits, OutputLimitStopsTextBuiltByAnyRoute) {
  const ChatTemplateLimits small{.max_output_bytes = 1000};
  // Written out bit by bit.
  EXPECT_TRUE(contains(limit_error("{% for i in range(200) %}0123456789{% endfor %}", small),
                       "output grew past 1000 bytes"));
  // One string doubled in a namespace, never printed.
  EXPECT_TRUE(contains(limit_error("{% set ns = namespace(s='ab') %}{% for i in range(60) %}"
                                   "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                                   small),
                       "a value grew past 1000 bytes"));
  // Repeated, refused before the repetition is built.
  EXPECT_TRUE(contains(limit_error("{% set s = 'ab' * 600 %}", small),
                       "a repetition would write out more than 1000 bytes"));
  // Empty ones too: each copy still costs a step.
  EXPECT_TRUE(contains(limit_error("{% set s = '' * 1000000000000 %}"), "a repetition would"));
  EXPECT_TRUE(contains(limit_error("{% set s = [[]] * 1000000000000 %}"), "a repetition would"));
  EXPECT_EQ(ChatTemplate("{{ ('ab' * 400) | length }}", small).render(nlohmann::json::object()),
            "800");
  // A list doubled the same way.
  EXPECT_TRUE(contains(limit_error("{% set ns = namespace(l=[1]) %}{% for i in range(60) %}"
                                   "{% set ns.l = ns.l + ns.l %}{% endfor %}",
                                   small),
                       "1000 bytes written out"));
  // Captured by a macro before it is printed.
  EXPECT_TRUE(contains(limit_error("{% macro m() %}{% for i in range(200) %}0123456789{% endfor %}"
                                   "{% endmacro %}{% set t = m() %}",
                                   small),
                       "output grew past 1000 bytes"));
}

TEST(ChatTemplateLimits, DefaultOutputLimitStopsDoublingBeforeMemoryRunsOut) {
  EXPECT_TRUE(contains(limit_error("{% set ns = namespace(s='0123456789abcdef') %}"
                                   "{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
                                   "{% endfor %}{{ ns.s | length }}"),
                       "(the chat template output limit)"));
}

TEST(ChatTemplateLimits, DeepNestingIsASyntaxErrorNotAStackOverflow) {
  const int levels = 200000;
  const std::string parens =
      "{{ " + std::string(levels, '(') + "1" + std::string(levels, ')') + " }}";
  EXPECT_TRUE(contains(limit_error(parens), "nested deeper than 100 levels"))
      << limit_error(parens);
  std::string nots = "{{ ";
  for (int i = 0; i < levels; ++i) nots += "not ";
  EXPECT_TRUE(contains(limit_error(nots + "x }}"), "the chat template depth limit"));
  EXPECT_TRUE(contains(limit_error("{{ " + std::string(levels, '-') + "1 }}"),
                       "the chat template depth limit"));
  std::string blocks;
  for (int i = 0; i < 1000; ++i) blocks += "{% if true %}";
  EXPECT_TRUE(contains(limit_error(blocks), "the chat template depth limit"));
  std::string lists = "{{ " + std::string(levels, '[') + std::string(levels, ']') + " }}";
  EXPECT_TRUE(contains(limit_error(lists), "the chat template depth limit"));
}

TEST(ChatTemplateLimits, LongOperatorChainsCountAsDepthNotAStackOverflow) {
  std::string sum = "{{ ";
  for (int i = 0; i < 200000; ++i) sum += "1+";
  EXPECT_TRUE(contains(limit_error(sum + "1 }}"), "chained or nested deeper than 100 levels"));
  std::string filters = "{{ 'a'";
  for (int i = 0; i < 200000; ++i) filters += "|trim";
  EXPECT_TRUE(contains(limit_error(filters + " }}"), "the chat template depth limit"));
  std::string attributes = "{{ x";
  for (int i = 0; i < 200000; ++i) attributes += ".y";
  EXPECT_TRUE(contains(limit_error(attributes + " }}"), "the chat template depth limit"));
  // Chains as published templates write them are far below the limit.
  EXPECT_EQ(render("{{ 'a' + 'b' + 'c' ~ 'd' | upper | lower }}"), "abcd");
}

TEST(ChatTemplateLimits, ValuesAreMeasuredAsWrittenOutBeforeTheyAreBuilt) {
  // Each copy of a long string in a list is a copy of its bytes.
  EXPECT_TRUE(contains(limit_error("{% set s = 'x' * 16000000 %}{% set l = [s] * 1000 %}"),
                       "a repetition would write out more than"));
  EXPECT_TRUE(contains(limit_error("{% set ns = namespace(l=['x' * 1000000]) %}"
                                   "{% for i in range(20) %}{% set ns.l = ns.l + ns.l %}"
                                   "{% endfor %}"),
                       "bytes written out (the chat template output limit)"));
  // Lists nested by a loop would recurse once per level when printed.
  EXPECT_TRUE(contains(limit_error("{% set ns = namespace(l=[]) %}{% for i in range(100000) %}"
                                   "{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l }}"),
                       "a value nested deeper than 100 levels"));
}

TEST(ChatTemplateLimits, DepthLimitIsConfigurableForParsingAndMacroCalls) {
  const std::string nested = "{{ ((((1)))) }}";
  EXPECT_EQ(render(nested), "1");
  EXPECT_TRUE(contains(limit_error(nested, {.max_depth = 3}), "nested deeper than 3 levels"));
  const std::string countdown =
      "{% macro down(n) %}{% if n > 0 %}{{ down(n - 1) }}{% endif %}{{ n }}{% endmacro %}"
      "{{ down(20) }}";
  EXPECT_NO_THROW(ChatTemplate(countdown).render(nlohmann::json::object()));
  EXPECT_TRUE(
      contains(limit_error(countdown, {.max_depth = 10}), "macro calls nested deeper than 10"));
}

}  // namespace
}  // namespace baton::testing
