// Template text, tags and whitespace, statements and scoping. Expected strings are what Jinja2
// renders with transformers' chat-template settings (trim_blocks, lstrip_blocks, loopcontrols).
#include <gtest/gtest.h>

#include "tests/core/formats/chat/chat_test_util.h"

namespace baton::testing {
namespace {

TEST(JinjaText, PlainTextAndOutputTags) {
  EXPECT_EQ(render("plain text"), "plain text");
  EXPECT_EQ(render("a{{ x }}b", {{"x", "X"}}), "aXb");
  EXPECT_EQ(render("{{ 'a' }}\n{{ 'b' }}\nc"), "a\nb\nc");
}

TEST(JinjaText, CommentsRenderNothing) {
  EXPECT_EQ(render("a{# gone #}b"), "ab");
  EXPECT_EQ(render("a{# {{ not parsed }} {% if %} #}b"), "ab");
}

TEST(JinjaText, OneTrailingNewlineIsDropped) {
  EXPECT_EQ(render("x\n"), "x");
  EXPECT_EQ(render("x\n\n"), "x\n");
}

TEST(JinjaText, NewlineSequencesBecomeLineFeeds) {
  EXPECT_EQ(render("a\r\nb\rc"), "a\nb\nc");
  EXPECT_EQ(render("{% if true %}\r\nx\r\n{% endif %}"), "x\n");
}

TEST(JinjaWhitespace, MinusStripsAllWhitespaceOnItsSide) {
  EXPECT_EQ(render("a   {{- 'b' -}}   c  {%- if true -%}  d  {%- endif %}"), "abcd");
  EXPECT_EQ(render("a \n {{- 'b' }} \n c"), "ab \n c");
  EXPECT_EQ(render("{% if true -%}  \n  x{% endif %}"), "x");
  EXPECT_EQ(render("a{#- c -#}  b"), "ab");
}

TEST(JinjaWhitespace, TrimBlocksDropsTheNewlineAfterABlockTag) {
  EXPECT_EQ(render("{% if true %}\nx\n{% endif %}\ny"), "x\ny");
  // Not after an output tag, and only one newline.
  EXPECT_EQ(render("{{ 'a' }}\n{% if true %}\n\nx{% endif %}"), "a\n\nx");
  // Spaces before the newline keep it.
  EXPECT_EQ(render("{% if true %}  \n  x{% endif %}"), "  \n  x");
  // Comments are trimmed like blocks.
  EXPECT_EQ(render("a\n{# c #}\nb"), "a\nb");
}

TEST(JinjaWhitespace, LstripBlocksDropsIndentationBeforeABlockTag) {
  EXPECT_EQ(render("a\n    {% if true %}\n    b\n    {% endif %}\nc"), "a\n    b\nc");
  EXPECT_EQ(render("\t{% if true %}x{% endif %}"), "x");
  EXPECT_EQ(render("a\n  {# c #}\nb"), "a\nb");
  // Only at the start of a line.
  EXPECT_EQ(render("{{ 1 }}  {% if true %}x{% endif %}"), "1  x");
  EXPECT_EQ(render("{{ 1 }}\n  {% if true %}x{% endif %}"), "1\nx");
}

TEST(JinjaWhitespace, PlusTurnsTheBlockOptionsOff) {
  // {%+ keeps the indentation before the tag, +%} the newline after it.
  EXPECT_EQ(render("a\n  {%+ if true %}x{% endif %}"), "a\n  x");
  EXPECT_EQ(render("{% if true +%}\nx{% endif %}"), "\nx");
  EXPECT_EQ(render("a\n    {%+ if true %}\n    b\n    {% endif +%}\nc"), "a\n        b\n\nc");
}

TEST(JinjaWhitespace, IndentedMultiLineTemplateRendersCompactly) {
  const char* source =
      "{%- for m in messages %}\n"
      "    {%- if m.role == 'user' %}\n"
      "        {{- 'U:' + m.content }}\n"
      "    {%- else %}\n"
      "        {{- ' A:' + m.content }}\n"
      "    {%- endif %}\n"
      "{%- endfor %}\n";
  const Json context = {{"messages", Json::array({{{"role", "user"}, {"content", "hi"}},
                                                  {{"role", "assistant"}, {"content", "yo"}}})}};
  EXPECT_EQ(render(source, context), "U:hi A:yo");
}

TEST(JinjaIf, ElifAndElseChooseOneBranch) {
  const char* source =
      "{% for n in [1, 2, 3] %}{% if n == 1 %}one{% elif n == 2 %}two{% else %}many{% endif %},"
      "{% endfor %}";
  EXPECT_EQ(render(source), "one,two,many,");
}

TEST(JinjaFor, LoopVariables) {
  EXPECT_EQ(render("{% for x in items %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}"
                   "{{ loop.last }}{{ loop.length }}{{ loop.revindex }}{{ loop.revindex0 }};"
                   "{% endfor %}",
                   {{"items", {"a", "b"}}}),
            "10TrueFalse221;21FalseTrue210;");
}

TEST(JinjaFor, PreviousAndNextItems) {
  EXPECT_EQ(render("{% for x in [1, 2, 3] %}{{ loop.previtem }}/{{ loop.nextitem }};{% endfor %}"),
            "/2;1/3;2/;");
}

TEST(JinjaFor, TupleUnpackingOverDictItems) {
  EXPECT_EQ(render("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}",
                   {{"d", {{"x", 1}, {"y", "z"}}}}),
            "x=1;y=z;");
  EXPECT_EQ(render("{% for a, b in [[1, 2], [3, 4]] %}{{ a }}{{ b }}{% endfor %}"), "1234");
}

TEST(JinjaFor, IteratesDictKeysAndStringCharacters) {
  EXPECT_EQ(render("{% for k in d %}{{ k }}{% endfor %}", {{"d", {{"b", 1}, {"a", 2}}}}), "ba");
  EXPECT_EQ(render("{% for c in 'h\xC3\xA9' %}[{{ c }}]{% endfor %}"), "[h][\xC3\xA9]");
}

TEST(JinjaFor, InlineFilterCountsOnlyKeptItems) {
  EXPECT_EQ(render("{% for x in [1, 2, 3, 4] if x % 2 == 0 %}{{ loop.index }}:{{ x }}"
                   "{% if not loop.last %},{% endif %}{% endfor %}"),
            "1:2,2:4");
}

TEST(JinjaFor, ElseRendersWhenNothingIsIterated) {
  EXPECT_EQ(render("{% for x in [] %}a{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for x in [1] if x > 1 %}a{% else %}none kept{% endfor %}"), "none kept");
  EXPECT_EQ(render("{% for x in [1] %}a{% else %}empty{% endfor %}"), "a");
}

TEST(JinjaFor, BreakAndContinue) {
  EXPECT_EQ(render("{% for n in [1, 2, 3, 4] %}{% if n == 2 %}{% continue %}{% endif %}"
                   "{% if n == 4 %}{% break %}{% endif %}{{ n }}{% endfor %}"),
            "13");
}

TEST(JinjaFor, NestedLoopsHaveTheirOwnLoopVariable) {
  EXPECT_EQ(render("{% for x in [1, 2] %}{% for y in [1, 2, 3] %}{{ loop.index }}{% endfor %}"
                   "{{ loop.index }}|{% endfor %}"),
            "1231|1232|");
}

TEST(JinjaSet, AssignsAndUnpacks) {
  EXPECT_EQ(render("{% set a = 1 %}{{ a }}"), "1");
  EXPECT_EQ(render("{% set a, b = [1, 2] %}{{ a }}{{ b }}"), "12");
  EXPECT_EQ(render("{% set x %}a{{ 1 }}b{% endset %}{{ x }}|{{ x | length }}"), "a1b|3");
}

TEST(JinjaSet, TopLevelSetShadowsAContextVariable) {
  EXPECT_EQ(
      render("{% set messages = messages[1:] %}{{ messages | length }}", {{"messages", {1, 2, 3}}}),
      "2");
}

// As in Jinja: a set inside a loop body lasts one iteration; an if-block has no scope.
TEST(JinjaScope, LoopBodyAssignmentsDoNotLeak) {
  EXPECT_EQ(render("{% set a = 1 %}{% for x in [1, 2] %}{{ a }}{% set a = 2 %}{{ a }}{% endfor %}"
                   "{{ a }}"),
            "12121");
  EXPECT_EQ(render("{% for x in [1] %}{% set y = 1 %}{% endfor %}[{{ y }}]"), "[]");
  EXPECT_EQ(render("{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}"), "2");
}

TEST(JinjaNamespace, AttributesSetInALoopSurviveIt) {
  EXPECT_EQ(render("{% set ns = namespace(total=0, seen=false) %}{% for x in [1, 2, 3] %}"
                   "{% set ns.total = ns.total + x %}{% if x == 2 %}{% set ns.seen = true %}"
                   "{% endif %}{% endfor %}{{ ns.total }} {{ ns.seen }}"),
            "6 True");
  EXPECT_EQ(render("{% set ns = namespace() %}{% set ns.a = 'x' %}{{ ns.a }}[{{ ns.b }}]"), "x[]");
  EXPECT_EQ(render("{% set ns = namespace(v=[]) %}{% for x in [1, 2] %}"
                   "{% set ns.v = ns.v + [x] %}{% endfor %}{{ ns.v }}"),
            "[1, 2]");
}

TEST(JinjaMacro, PositionalKeywordAndDefaultArguments) {
  const std::string macro = "{% macro m(a, b=2) %}{{ a }}-{{ b }}{% endmacro %}";
  EXPECT_EQ(render(macro + "{{ m(1) }}|{{ m(1, b=3) }}|{{ m(b=4, a=5) }}|{{ m() }}"),
            "1-2|1-3|5-4|-2");
}

TEST(JinjaMacro, SeesTopLevelVariablesButNotTheCallersLoop) {
  EXPECT_EQ(render("{% set g = 5 %}{% macro m() %}{{ g }}{{ h }}{% endmacro %}{% set h = 7 %}"
                   "{{ m() }}"),
            "57");
  EXPECT_EQ(render("{% macro m() %}[{{ x }}]{% endmacro %}{% for x in [1] %}{{ m() }}{% endfor %}"),
            "[]");
}

TEST(JinjaMacro, OutlivesTheLoopIterationDefiningIt) {
  EXPECT_EQ(render("{% set ns = namespace() %}{% for x in [1, 2] %}{% macro m(v) %}<{{ v }}>"
                   "{% endmacro %}{% set ns.m = m %}{% endfor %}{{ ns.m(3) }}"),
            "<3>");
}

TEST(JinjaMacro, Recursion) {
  EXPECT_EQ(render("{% macro count(n) %}{{ n }}{% if n > 0 %}{{ count(n - 1) }}{% endif %}"
                   "{% endmacro %}{{ count(3) }}"),
            "3210");
}

TEST(JinjaMacro, CallBlockPassesCaller) {
  EXPECT_EQ(
      render("{% macro m(a) %}[{{ caller() }}]{% endmacro %}{% call m(1) %}body{% endcall %}"),
      "[body]");
  EXPECT_EQ(render("{% macro m(a) %}[{{ caller(a) }}]{% endmacro %}{% for x in [5] %}"
                   "{% call(v) m(1) %}{{ v }}{{ x }}{% endcall %}{% endfor %}"),
            "[15]");
}

TEST(JinjaBlocks, GenerationRendersItsBody) {
  EXPECT_EQ(render("a{% generation %}b{{ 1 }}{% endgeneration %}c"), "ab1c");
}

TEST(JinjaBlocks, FilterBlockAppliesFiltersToItsBody) {
  EXPECT_EQ(render("{% filter upper | replace('A', 'z') %}abc{% endfilter %}"), "zBC");
}

TEST(JinjaBlocks, RawKeepsTagsAsText) {
  EXPECT_EQ(render("{% raw %}{{ x }}{% if %}{% endraw %}"), "{{ x }}{% if %}");
  EXPECT_EQ(render("a\n  {% raw %}\n{{ x }}\n  {% endraw %}\nb"), "a\n\n{{ x }}\nb");
}

}  // namespace
}  // namespace baton::testing
