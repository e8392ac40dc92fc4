// Errors: syntax errors name line:column and what was expected; runtime errors name the line;
// raise_exception's message reaches the caller.
#include <gtest/gtest.h>

#include "tests/core/formats/chat/chat_test_util.h"

namespace baton::testing {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ChatTemplateErrors, SyntaxErrorNamesLineColumnAndExpectation) {
  const std::string message = render_error("line one\n{{ 1 + }}");
  EXPECT_TRUE(contains(message, "syntax error at 2:8")) << message;
  EXPECT_TRUE(contains(message, "expected an expression, got '}}'")) << message;
  EXPECT_TRUE(contains(render_error("{% if x %}a{% endif x %}"), "1:21: expected '%}', got 'x'"));
  EXPECT_TRUE(contains(render_error("{{ f(a=1, 2) }}"), "1:11: expected a keyword argument"));
}

TEST(ChatTemplateErrors, UnclosedBlockNamesTheOpeningTag) {
  const std::string message = render_error("{% for x in xs %}\n  {% if x %}{{ x }}{% endif %}\n");
  EXPECT_TRUE(contains(message, "unclosed 'for' block opened at 1:4: expected 'endfor' or 'else'"))
      << message;
  EXPECT_TRUE(contains(render_error("{% if true %}a{% endfor %}"),
                       "1:18: unexpected tag 'endfor': expected 'elif', 'else' or 'endif'"));
}

TEST(ChatTemplateErrors, LexicalErrors) {
  EXPECT_TRUE(contains(render_error("ok\n{{ 'abc }}"), "2:4: unterminated string literal"));
  EXPECT_TRUE(contains(render_error("{# abc"), "1:1: unclosed comment"));
  EXPECT_TRUE(contains(render_error("{{ x"), "1:1: unclosed '{{': expected '}}'"));
  EXPECT_TRUE(contains(render_error("{{ 1 ! 2 }}"), "1:6: unexpected character '!'"));
}

TEST(ChatTemplateErrors, UnknownAndMisplacedTags) {
  EXPECT_TRUE(contains(render_error("{% include 'x' %}"), "1:4: unknown tag 'include'"));
  EXPECT_TRUE(contains(render_error("{% endif %}"), "unknown tag 'endif'"));
  EXPECT_TRUE(contains(render_error("{% if true %}{% break %}{% endif %}"),
                       "1:17: 'break' outside a for loop"));
  EXPECT_TRUE(contains(render_error("{% for x in xs recursive %}{% endfor %}"),
                       "recursive loops are not supported"));
}

TEST(ChatTemplateErrors, UnknownFilterOrTestFailsWhenUsedNamingTheLine) {
  const std::string message = render_error("a\nb\n{{ 'x' | no_such_filter }}");
  EXPECT_TRUE(contains(message, "error at line 3: unknown filter 'no_such_filter'")) << message;
  EXPECT_TRUE(contains(render_error("{{ 1 is no_such_test }}"), "unknown test 'no_such_test'"));
  // An unused branch may name one: Baton lacks some of Jinja's filters.
  EXPECT_EQ(render("{% if false %}{{ x | no_such_filter }}{% endif %}ok"), "ok");
}

TEST(ChatTemplateErrors, RaiseExceptionMessageSurfaces) {
  EXPECT_EQ(render_error("{{ raise_exception('Roles must alternate') }}"),
            "chat template: Roles must alternate");
}

TEST(ChatTemplateErrors, RuntimeTypeErrorsNameTheLine) {
  EXPECT_TRUE(contains(render_error("\n{{ 'a' + 1 }}"),
                       "error at line 2: unsupported operand type(s) for +: 'str' and 'int'"));
  EXPECT_TRUE(contains(render_error("{{ 1() }}"), "'int' object is not callable"));
  EXPECT_TRUE(contains(render_error("{{ missing() }}"), "'missing' is undefined"));
  EXPECT_TRUE(contains(render_error("{{ 'x'.nope() }}"), "'str' object has no method 'nope'"));
  EXPECT_TRUE(contains(render_error("{{ 1 / 0 }}"), "division by zero"));
  EXPECT_TRUE(
      contains(render_error("{% for x in 5 %}{% endfor %}"), "'int' object is not iterable"));
  EXPECT_TRUE(contains(render_error("{% set a = 1 %}{% set a.b = 2 %}"), "not a namespace()"));
  // Found by tests/fuzz: integer arithmetic beyond int64 (undefined behaviour before), and
  // repetitions that would exhaust memory.
  EXPECT_TRUE(contains(render_error("{{ 7577 ** 7 ** 2 }}"), "integer overflow in **"));
  EXPECT_TRUE(contains(render_error("{{ 9223372036854775807 + 1 }}"), "integer overflow in +"));
  EXPECT_TRUE(contains(render_error("{{ -9223372036854775807 - 2 }}"), "integer overflow in -"));
  EXPECT_TRUE(contains(render_error("{{ 4294967296 * 4294967296 }}"), "integer overflow in *"));
  EXPECT_TRUE(contains(render_error("{{ 'ab' * 100000000 }}"), "a repetition would write out"));
  // Found by tests/fuzz: a namespace holding itself printed without end.
  EXPECT_TRUE(contains(render_error("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}"),
                       "namespaces do not nest here"));
  EXPECT_TRUE(contains(render_error("{% set ns = namespace() %}{% set ns.me = [{'a': ns}] %}"),
                       "namespaces do not nest here"));
  EXPECT_TRUE(contains(render_error("{{ x | tojson }}"),
                       "Object of type undefined is not JSON serializable"));
  EXPECT_TRUE(contains(render_error("{{ range(1000000) | length }}"), "range() is too big"));
}

TEST(ChatTemplateErrors, MacroArgumentsAndRunawayRecursion) {
  EXPECT_TRUE(contains(render_error("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}"),
                       "macro 'm' takes not more than 1 argument(s)"));
  EXPECT_TRUE(contains(render_error("{% macro m(a) %}{% endmacro %}{{ m(b=1) }}"),
                       "unexpected keyword argument 'b'"));
  EXPECT_TRUE(contains(render_error("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}"),
                       "macro calls nested deeper than"));
}

TEST(ChatTemplateErrors, ContextMustBeAnObject) {
  EXPECT_THROW(ChatTemplate("x").render(nlohmann::json::array()), Error);
}

}  // namespace
}  // namespace baton::testing
