// Expressions: literals, operators, access, tests, calls, methods and Undefined. Values print as
// Python's str() would, which is what Jinja writes.
#include <gtest/gtest.h>

#include "tests/core/formats/chat/chat_test_util.h"

namespace baton::testing {
namespace {

TEST(JinjaLiterals, ScalarsPrintAsPython) {
  EXPECT_EQ(render("{{ none }} {{ None }} {{ true }} {{ False }} {{ 42 }} {{ 1_000 }} {{ -4 }}"),
            "None None True False 42 1000 -4");
  EXPECT_EQ(
      render("{{ 1.0 }}|{{ 1.5 }}|{{ 1e20 }}|{{ 0.00001 }}|{{ 0.0001 }}|{{ 1e15 }}|{{ 1e16 }}"),
      "1.0|1.5|1e+20|1e-05|0.0001|1000000000000000.0|1e+16");
  EXPECT_EQ(render("{{ 0.1 + 0.2 }}|{{ 1 / 3 }}"), "0.30000000000000004|0.3333333333333333");
}

TEST(JinjaLiterals, StringsWithBothQuotesAndEscapes) {
  EXPECT_EQ(render(R"({{ 'a\nb\t"c"' }}|{{ "it's" }}|{{ 'it\'s' }})"), "a\nb\t\"c\"|it's|it's");
  EXPECT_EQ(render(R"({{ "\u00e9\x41\101\d" }})"),
            "\xC3\xA9"
            "AA\\d");
  EXPECT_EQ(render("{{ 'a' 'b' }}"), "ab");
  EXPECT_EQ(render("{{ 'line one\nline two' }}"), "line one\nline two");
}

TEST(JinjaLiterals, ListsDictsAndTuplesPrintAsPython) {
  EXPECT_EQ(render(R"({{ [1, 'a', "b'c", none, true, 2.5] }})"),
            R"([1, 'a', "b'c", None, True, 2.5])");
  EXPECT_EQ(render("{{ {'k': 1, 'l': [2]} }}|{{ {'a': 1,} }}|{{ [1, 2,] }}"),
            "{'k': 1, 'l': [2]}|{'a': 1}|[1, 2]");
  EXPECT_EQ(render("{{ (1, 'a') }}{{ (1,) }}{{ () }}"), "(1, 'a')(1,)()");
  EXPECT_EQ(render("{{ {'a': {'b': 1}} }}"), "{'a': {'b': 1}}");
}

TEST(JinjaOperators, Arithmetic) {
  EXPECT_EQ(
      render("{{ 1 + 2 }} {{ 7 // 2 }} {{ 7 % 3 }} {{ 2 * 3 - 1 }} {{ 2 ** 10 }} {{ 1.5 + 1 }}"),
      "3 3 1 5 1024 2.5");
  EXPECT_EQ(render("{{ 10 / 4 }} {{ 10 / 5 }} {{ 2 ** -1 }} {{ 1 + true }}"), "2.5 2.0 0.5 2");
  // Integer powers by squaring: exact up to int64's ends, and quick for any exponent.
  EXPECT_EQ(render("{{ (-1) ** 1000000000001 }} {{ 3 ** 39 }} {{ (-2) ** 63 }} {{ 0 ** 0 }}"),
            "-1 4052555153018976267 -9223372036854775808 1");
}

TEST(JinjaOperators, FloorDivisionAndModuloFollowPython) {
  EXPECT_EQ(render("{{ -7 // 2 }} {{ -7 % 3 }} {{ 5 % -3 }} {{ -5.5 % 3 }} {{ 5 // 2.0 }}"),
            "-4 2 -1 0.5 2.0");
}

TEST(JinjaOperators, StringsAndListsCombine) {
  EXPECT_EQ(render("{{ 'a' + 'b' }} {{ 'ab' * 3 }} {{ [1] * 2 }} {{ [1] + [2] }}"),
            "ab ababab [1, 1] [1, 2]");
  EXPECT_EQ(render("{{ 'n=' ~ 3 ~ none ~ true }}"), "n=3NoneTrue");
}

TEST(JinjaOperators, PrecedenceFiltersBindTighterThanArithmetic) {
  EXPECT_EQ(render("{{ 'a' + ' b ' | trim + 'c' }}"), "abc");
  EXPECT_EQ(
      render("{{ -2 ** 2 }} {{ (1 + 2) * 3 }} {{ 10 - 2 - 3 }} {{ 2 * 3 ~ 'x' }} {{ 1 ~ 2 * 3 }}"),
      "4 9 5 6x 16");
  EXPECT_EQ(render("{{ xs | length - 1 }} {{ -1 | abs }}", {{"xs", {1, 2, 3}}}), "2 1");
}

TEST(JinjaOperators, ComparisonsChainAndMixNumbers) {
  EXPECT_EQ(
      render("{{ 1 < 2 }}{{ 2 <= 1 }}{{ 'a' == 'a' }}{{ 'a' != 'a' }}{{ 3 > 2 }}{{ 1 >= 1 }}"),
      "TrueFalseTrueFalseTrueTrue");
  EXPECT_EQ(
      render("{{ 1 < 2 < 3 }}{{ 3 > 2 > 2 }}{{ 1 == 1.0 }}{{ true == 1 }}{{ [1, 2] < [1, 3] }}"),
      "TrueFalseTrueTrueTrue");
  EXPECT_EQ(render("{{ (1, 2) == [1, 2] }}{{ [1, 2] == [1, 2] }}"), "FalseTrue");
}

TEST(JinjaOperators, LogicReturnsOperandsAndShortCircuits) {
  EXPECT_EQ(render("{{ true and false }}{{ true or false }}{{ not true }}{{ not 1 == 2 }}"),
            "FalseTrueFalseTrue");
  EXPECT_EQ(render("{{ '' or 'x' }}{{ 'a' and 'b' }}{{ false and missing.attribute }}"), "xbFalse");
}

TEST(JinjaOperators, Membership) {
  EXPECT_EQ(render("{{ 'b' in 'abc' }}{{ 2 in [1, 2] }}{{ 'k' in d }}{{ 'q' not in d }}"
                   "{{ 'x' in ('x', 'y') }}{{ 'a' in missing }}",
                   {{"d", {{"k", 1}}}}),
            "TrueTrueTrueTrueTrueFalse");
}

TEST(JinjaOperators, InlineIfElse) {
  EXPECT_EQ(render("{{ 'yes' if flag else 'no' }}|{{ 'a' if false }}|{{ 1 if false else 2 if false "
                   "else 3 }}",
                   {{"flag", true}}),
            "yes||3");
}

TEST(JinjaAccess, AttributesAndSubscripts) {
  const Json context = {{"d", {{"k", "v"}, {"n", {{"m", 1}}}}}, {"xs", {1, 2, 3}}};
  EXPECT_EQ(
      render("{{ d.k }}{{ d['k'] }}{{ d.n.m }}{{ d['n']['m'] }}{{ xs[0] }}{{ xs[-1] }}{{ xs.1 }}",
             context),
      "vv11132");
  EXPECT_EQ(render("[{{ xs[9] }}][{{ d.missing }}][{{ 'abc'[9] }}][{{ 'abc'.foo }}]", context),
            "[][][][]");
}

TEST(JinjaAccess, Slices) {
  const Json context = {{"xs", {1, 2, 3, 4, 5}}};
  EXPECT_EQ(render("{{ xs[1:] }}{{ xs[:2] }}{{ xs[::-1] }}{{ xs[::2] }}{{ xs[1::2] }}", context),
            "[2, 3, 4, 5][1, 2][5, 4, 3, 2, 1][1, 3, 5][2, 4]");
  EXPECT_EQ(render("{{ xs[-1:0:-1] }}{{ xs[:-2:-1] }}{{ xs[7:] }}{{ xs[-2:] }}", context),
            "[5, 4, 3, 2][5][][4, 5]");
  EXPECT_EQ(render("{{ 'hello'[1:3] }}{{ 'abc'[::-1] }}{{ 'h\xC3\xA9llo'[:2] }}"),
            "elcbah\xC3\xA9");
}

TEST(JinjaTests, TypeAndValueTests) {
  const Json context = {{"x", 1}, {"n", nullptr}, {"s", "s"}, {"d", {{"a", 1}}}, {"f", 1.5}};
  EXPECT_EQ(render("{{ x is defined }}{{ y is defined }}{{ y is undefined }}{{ n is none }}"
                   "{{ s is string }}{{ d is mapping }}{{ x is number }}{{ f is float }}",
                   context),
            "TrueFalseTrueTrueTrueTrueTrueTrue");
  EXPECT_EQ(
      render("{{ x is integer }}{{ true is integer }}{{ true is number }}{{ true is boolean }}"
             "{{ false is false }}{{ true is true }}{{ 1 is true }}",
             context),
      "TrueFalseTrueTrueTrueTrueFalse");
  EXPECT_EQ(render("{{ s is iterable }}{{ d is iterable }}{{ x is iterable }}{{ y is iterable }}"
                   "{{ s is sequence }}{{ range is callable }}",
                   context),
            "TrueTrueFalseTrueTrueTrue");
}

TEST(JinjaTests, ComparisonTestsAndArguments) {
  EXPECT_EQ(render("{{ 5 is even }}{{ 5 is odd }}{{ 6 is divisibleby 3 }}{{ 6 is divisibleby(4) }}"
                   "{{ 'a' is in ['a'] }}{{ 'x' is lower }}{{ 'X' is upper }}"),
            "FalseTrueTrueFalseTrueTrueTrue");
  EXPECT_EQ(render("{{ 1 is equalto 1 }}{{ 1 is eq 2 }}{{ 2 is gt 1 }}{{ 2 is le 1 }}"
                   "{{ false is sameas false }}{{ 0 is sameas false }}"),
            "TrueFalseTrueFalseTrueFalse");
}

TEST(JinjaTests, NegatedTestsAndNotBindLooserThanTests) {
  EXPECT_EQ(render("{{ 'x' is not string }}{{ 1 is not none }}{{ not x is defined }}"),
            "FalseTrueTrue");
  EXPECT_EQ(render("{{ 'a' if x is defined else 'b' }}{{ x is defined and y is not defined }}"),
            "bFalse");
}

TEST(JinjaMethods, StringMethods) {
  EXPECT_EQ(
      render("{{ ' x '.strip() }}|{{ ' x '.lstrip() }}|{{ ' x '.rstrip() }}|{{ 'ab'.upper() }}"
             "|{{ 'AB'.lower() }}|{{ 'hello wORLD'.title() }}|{{ 'aBC'.capitalize() }}"),
      "x|x | x|AB|ab|Hello World|Abc");
  EXPECT_EQ(
      render(
          R"([{{ '\n\nx\n'.strip('\n') }}][{{ 'xxay'.lstrip('x') }}][{{ 'ayyx'.rstrip('xy') }}])"),
      "[x][ay][a]");
  EXPECT_EQ(render("{{ 'abc'.startswith('ab') }}{{ 'abc'.endswith('x') }}"
                   "{{ 'abc'.startswith(('x', 'a')) }}"),
            "TrueFalseTrue");
  EXPECT_EQ(render("{{ 'aXbX'.replace('X', 'y') }}|{{ 'aXbX'.replace('X', 'y', 1) }}"
                   "|{{ '-'.join(['a', 'b']) }}|{{ 'abc'.find('c') }}"),
            "ayby|aybX|a-b|2");
}

TEST(JinjaMethods, SplitAsPython) {
  EXPECT_EQ(render("{{ 'a,b,,c'.split(',') }}{{ ' a  b '.split() }}{{ 'a b c'.split(' ', 1) }}"),
            "['a', 'b', '', 'c']['a', 'b']['a', 'b c']");
  EXPECT_EQ(render("{{ 'r<think>x</think>answer'.split('</think>')[-1] }}"), "answer");
}

TEST(JinjaMethods, Format) {
  EXPECT_EQ(render("{{ 'hello {} {}'.format('a', 1) }}|{{ '{0}{x}{{}}'.format(1, x=2) }}"),
            "hello a 1|12{}");
}

TEST(JinjaMethods, DictMethods) {
  const Json context = {{"d", {{"a", 1}, {"b", "x"}}}};
  EXPECT_EQ(render("{{ d.items() | list }}|{{ d.keys() | list }}|{{ d.values() | list }}", context),
            "[('a', 1), ('b', 'x')]|['a', 'b']|[1, 'x']");
  EXPECT_EQ(render("{{ d.get('a') }}|{{ d.get('z') }}|{{ d.get('z', 3) }}", context), "1|None|3");
}

TEST(JinjaGlobals, RangeNamespaceAndDict) {
  EXPECT_EQ(render("{% for i in range(3) %}{{ i }}{% endfor %}|{{ range(1, 8, 3) | list }}"
                   "|{{ range(3, -1, -1) | list }}|{{ range(0, 3, -1) | list }}"),
            "012|[1, 4, 7]|[3, 2, 1, 0]|[]");
  EXPECT_EQ(render("{{ namespace(a=1).a }}{{ dict(a=1) }}"), "1{'a': 1}");
}

TEST(JinjaGlobals, StrftimeNowFormatsTheCurrentDate) {
  const std::string year = render("{{ strftime_now('%Y') }}");
  ASSERT_EQ(year.size(), 4u);
  EXPECT_GE(std::stoi(year), 2024);
  EXPECT_EQ(render("{{ strftime_now('%d %b %Y') | length }}"), "11");
}

TEST(JinjaUndefined, RendersEmptyIsFalsyAndIteratesAsEmpty) {
  EXPECT_EQ(render("[{{ missing }}][{{ missing ~ 'a' }}][{{ missing | length }}]"
                   "[{% for x in missing %}x{% endfor %}][{{ 'y' if missing else 'n' }}]"),
            "[][a][0][][n]");
  EXPECT_EQ(render("{{ missing == missing }}{{ missing == none }}{{ missing is none }}"),
            "TrueFalseFalse");
  EXPECT_EQ(render("{{ (missing | default({})).y is defined }}"), "False");
}

TEST(JinjaUndefined, MissingKeysAreUndefinedButUsingThemFails) {
  const Json context = {{"message", {{"role", "user"}}}};
  EXPECT_EQ(render("{{ message.content is defined }}{{ message.content }}", context), "False");
  EXPECT_NE(
      render_error("{{ message.content.strip() }}", context).find("has no attribute 'content'"),
      std::string::npos);
  EXPECT_NE(render_error("{{ missing.attribute }}").find("'missing' is undefined"),
            std::string::npos);
  EXPECT_NE(render_error("{{ missing + 'a' }}").find("'missing' is undefined"), std::string::npos);
}

}  // namespace
}  // namespace baton::testing
