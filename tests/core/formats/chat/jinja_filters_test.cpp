// Filters, including transformers' tojson (Python's json.dumps with ensure_ascii=False).
#include <gtest/gtest.h>

#include "tests/core/formats/chat/chat_test_util.h"

namespace baton::testing {
namespace {

TEST(JinjaFilters, TrimAndCase) {
  EXPECT_EQ(render("[{{ '  x \n' | trim }}][{{ 'xxaxx' | trim('x') }}]"), "[x][a]");
  EXPECT_EQ(render("{{ 'Ab' | upper }}{{ 'Ab' | lower }}{{ 'aBC' | capitalize }}"), "ABabAbc");
  EXPECT_EQ(render("{{ 'hello wORLD' | title }}|{{ \"they're bill's-x (a\" | title }}"),
            "Hello World|They're Bill's-X (A");
}

TEST(JinjaFilters, LengthCountFirstLast) {
  EXPECT_EQ(render("{{ xs | length }}{{ d | count }}{{ 'abc' | length }}{{ '\xC3\xA9' | length }}",
                   {{"xs", {1, 2, 3}}, {"d", {{"a", 1}}}}),
            "3131");
  EXPECT_EQ(
      render("{{ [1, 2, 3] | first }}{{ [1, 2, 3] | last }}{{ 'abc' | first }}[{{ [] | first }}]"),
      "13a[]");
}

TEST(JinjaFilters, JoinWithSeparatorAndAttribute) {
  EXPECT_EQ(render("{{ [1, 2] | join }}|{{ ['a', none] | join('-') }}|"
                   "{{ [{'n': 'a'}, {'n': 'b'}] | join(', ', attribute='n') }}"),
            "12|a-None|a, b");
}

TEST(JinjaFilters, DefaultOnlyReplacesUndefinedUnlessBoolean) {
  EXPECT_EQ(
      render("{{ missing | default('d') }}|{{ '' | default('d') }}|{{ '' | default('d', true) }}"
             "|{{ none | d('d') }}|{{ missing | default }}|"),
      "d||d|None||");
}

TEST(JinjaFilters, Conversions) {
  EXPECT_EQ(render("{{ 5 | string }}{{ none | string }}{{ [1] | string }}{{ true | string }}"),
            "5None[1]True");
  EXPECT_EQ(
      render("{{ '12' | int }} {{ 'x' | int }} {{ 'x' | int(7) }} {{ 1.9 | int }} {{ '1.5' | int }}"
             " {{ true | int }} {{ '0x1A' | int(base=16) }}"),
      "12 0 7 1 1 1 26");
  EXPECT_EQ(render("{{ '1.5' | float }} {{ 2 | float }} {{ 'x' | float }}"), "1.5 2.0 0.0");
  EXPECT_EQ(render("{{ 'ab' | list }}{{ d | list }}{{ d | items | list }}",
                   {{"d", {{"a", 1}, {"b", 2}}}}),
            "['a', 'b']['a', 'b'][('a', 1), ('b', 2)]");
}

TEST(JinjaFilters, ReplaceSafeEscape) {
  EXPECT_EQ(render("{{ 'aXbX' | replace('X', 'y') }}|{{ 'aXbX' | replace('X', 'y', 1) }}"),
            "ayby|aybX");
  EXPECT_EQ(render("{{ '<a href=\"x\">&\\'' | e }}|{{ '<b>' | escape }}|{{ '<b>' | safe }}"),
            "&lt;a href=&#34;x&#34;&gt;&amp;&#39;|&lt;b&gt;|<b>");
}

TEST(JinjaFilters, SelectAndRejectByTestAndAttribute) {
  const Json context = {{"msgs", Json::array({{{"role", "user"}, {"content", "a"}},
                                              {{"role", "assistant"}, {"content", "b"}},
                                              {{"role", "user"}, {"content", "c"}}})}};
  EXPECT_EQ(
      render("{{ msgs | selectattr('role', 'equalto', 'user') | map(attribute='content') | list }}"
             "{{ msgs | rejectattr('role', 'eq', 'user') | map(attribute='content') | join }}",
             context),
      "['a', 'c']b");
  EXPECT_EQ(render("{{ [{'r': 'u'}, {'r': ''}, {'x': 1}] | selectattr('r') | list }}"
                   "{{ [{'r': 'u'}, {'x': 1}] | rejectattr('r', 'defined') | list }}"),
            "[{'r': 'u'}][{'x': 1}]");
  EXPECT_EQ(
      render("{{ [1, 2, 3, 4] | select('odd') | list }}{{ [1, 2, 3, 4] | reject('even') | list }}"
             "{{ [1, 2, 3] | select('gt', 1) | list }}{{ [0, 1, ''] | select | list }}"),
      "[1, 3][1, 3][2, 3][1]");
}

TEST(JinjaFilters, MapByAttributeOrFilter) {
  EXPECT_EQ(
      render("{{ [{'a': 1}, {'a': 2}, {}] | map(attribute='a', default=0) | list }}"
             "{{ ['a', 'b'] | map('upper') | join(',') }}{{ [1, 2] | map('string') | join }}"),
      "[1, 2, 0]A,B12");
  EXPECT_EQ(render("{{ [{'f': {'n': 'x'}}] | map(attribute='f.n') | first }}"), "x");
}

TEST(JinjaFilters, UniqueReverseSort) {
  EXPECT_EQ(render("{{ [1, 2, 2, 1] | unique | list }}{{ ['A', 'a', 'b'] | unique | list }}"),
            "[1, 2]['A', 'b']");
  EXPECT_EQ(render("{{ [1, 2] | reverse | list }}{{ 'abc' | reverse }}"), "[2, 1]cba");
  EXPECT_EQ(
      render(
          "{{ [3, 1, 2] | sort }}{{ ['b', 'A', 'a'] | sort }}{{ [3, 1, 2] | sort(reverse=true) }}"
          "{{ [{'a': 2}, {'a': 1}] | sort(attribute='a') }}"),
      "[1, 2, 3]['A', 'a', 'b'][3, 2, 1][{'a': 1}, {'a': 2}]");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2} | dictsort }}"), "[('a', 2), ('b', 1)]");
}

TEST(JinjaFilters, Indent) {
  EXPECT_EQ(render("{{ 'a\nb\n\nc' | indent(2) }}|{{ 'a\nb' | indent(2, true) }}"
                   "|{{ 'a\n\nb' | indent(2, blank=true) }}|{{ 'a\nb\n' | indent(2) }}|{{ 'a\nb' | "
                   "indent('> ') }}"),
            "a\n  b\n\n  c|  a\n  b|a\n  \n  b|a\n  b\n|a\n> b");
}

TEST(JinjaFilters, AbsAndRound) {
  EXPECT_EQ(render("{{ -3 | abs }} {{ -1.5 | abs }}"), "3 1.5");
  EXPECT_EQ(render("{{ 3.7 | round }} {{ 3.14159 | round(2) }} {{ 3.5 | round(0, 'floor') }}"
                   " {{ 3.2 | round(0, 'ceil') }} {{ 2.5 | round }} {{ 3.5 | round }}"),
            "4.0 3.14 3.0 4.0 2.0 4.0");
}

TEST(JinjaFilters, ToJsonMatchesPythonJsonDumps) {
  EXPECT_EQ(render("{{ {'a': 'h\xC3\xA9\"\\n', 'b': [1, 2.5, none, true]} | tojson }}"),
            "{\"a\": \"h\xC3\xA9\\\"\\n\", \"b\": [1, 2.5, null, true]}");
  EXPECT_EQ(
      render("{{ {'a': [], 'b': {}, 'c': [1, {'d': 2}]} | tojson(indent=2) }}"),
      "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": 2\n    }\n  ]\n}");
  EXPECT_EQ(render("{{ 'h\xC3\xA9\xF0\x9F\x98\x80' | tojson(ensure_ascii=true) }}"),
            "\"h\\u00e9\\ud83d\\ude00\"");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}{{ {'a': [1, 2]} | "
                   "tojson(separators=(',', ':')) }}"),
            "{\"a\": 2, \"b\": 1}{\"a\":[1,2]}");
  EXPECT_EQ(render("{{ 1e100 | tojson }} {{ 0.1 | tojson }} {{ 'a\\u0001' | tojson }} {{ (1, 2) | "
                   "tojson }}"),
            "1e+100 0.1 \"a\\u0001\" [1, 2]");
}

TEST(JinjaFilters, ToJsonKeepsTheContextsKeyOrder) {
  const Json tool = Json::parse(R"({"name": "f", "parameters": {"z": 1, "a": 2}})");
  EXPECT_EQ(render("{{ tool | tojson }}", {{"tool", tool}}),
            R"({"name": "f", "parameters": {"z": 1, "a": 2}})");
  // nlohmann::json sorts keys itself, so render() sees them sorted.
  EXPECT_EQ(
      ChatTemplate("{{ tool | tojson }}").render({{"tool", nlohmann::json::parse(tool.dump())}}),
      R"({"name": "f", "parameters": {"a": 2, "z": 1}})");
}

}  // namespace
}  // namespace baton::testing
