// Regular expressions compiled to GBNF: the grammar accepts exactly what std::regex (ECMAScript)
// matches, on random strings, as a whole text and inside a JSON string; what a grammar cannot
// follow is refused by name.
#include "core/serving/sampling/regex_grammar.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <string>

#include "baton/error.h"
#include "core/serving/sampling/grammar_matcher.h"

namespace baton {
namespace {

bool whole_match(const std::string& gbnf, const std::string& text) {
  GrammarMatcher m(std::make_shared<const Grammar>(parse_gbnf(gbnf)));
  return m.advance(text) && m.complete();
}

std::string random_text(std::mt19937& rng, const std::string& alphabet) {
  std::uniform_int_distribution<size_t> length(0, 8), pick(0, alphabet.size() - 1);
  std::string text;
  for (size_t n = length(rng); n > 0; --n) text += alphabet[pick(rng)];
  return text;
}

const char* const kPatterns[] = {
    "a*b",     "(ab|a)+b?",      "[a-c]{2,3}", "\\d+(\\.\\d{1,2})?",
    "[^ab]*a", "(?:a|bc){0,2}c", "\\w\\s?\\W", "a.b",
    "[-a]+",   "(a|)b",          "x{2}y{,2}",  "[\\d_]+",
    "a{1,}",   "\\.a",           "(?P<n>ab)*",
};

TEST(RegexGrammar, AgreesWithStdRegexOnWholeTexts) {
  std::mt19937 rng(7);
  for (const char* pattern : kPatterns) {
    SCOPED_TRACE(pattern);
    // std::regex lacks Python's {,n} and named groups: give it the equivalent.
    std::string ecma = std::regex_replace(pattern, std::regex("\\{,"), "{0,");
    ecma = std::regex_replace(ecma, std::regex("\\?P<n>"), "");
    const std::regex reference(ecma);
    const std::string gbnf = "root ::= " + regex_to_gbnf(pattern) + "\n";
    int matched = 0;
    for (int i = 0; i < 2000; ++i) {
      const std::string text = random_text(rng, "abcxy1_ .-");
      const bool expected = std::regex_match(text, reference);
      matched += expected;
      ASSERT_EQ(whole_match(gbnf, text), expected) << "text '" << text << "'";
    }
    EXPECT_GT(matched, 0) << "no random text matched; the test would prove little";
  }
}

TEST(RegexGrammar, InsideAJsonStringSearchesUnlessAnchoredAndEscapes) {
  std::mt19937 rng(11);
  const char* const patterns[] = {
      "ab", "^a\"", "b\\\\$", "^[a\"]+$", "^[^a]b.$", "^\\d{1,2}[^\"]*x$", "a|b\\\\"};
  for (const char* pattern : patterns) {
    SCOPED_TRACE(pattern);
    const std::regex reference(pattern);
    const std::string gbnf = "root ::= \"\\\"\" (" +
                             regex_to_gbnf(pattern, {.inside_json_string = true, .search = true}) +
                             ") \"\\\"\"\n";
    int matched = 0;
    for (int i = 0; i < 2000; ++i) {
      const std::string text = random_text(rng, "ab\"\\-1x2");
      const bool expected = std::regex_search(text, reference);
      matched += expected;
      ASSERT_EQ(whole_match(gbnf, nlohmann::json(text).dump()), expected)
          << "text '" << text << "'";
    }
    EXPECT_GT(matched, 0);
  }
}

TEST(RegexGrammar, ControlCharactersAreWrittenAsJsonEscapes) {
  const std::string gbnf =
      "root ::= " + regex_to_gbnf("^a\\nb\\t$", {.inside_json_string = true, .search = true});
  EXPECT_TRUE(whole_match(gbnf, "a\\nb\\t"));
  EXPECT_FALSE(whole_match(gbnf, "a\nb\t"));
}

TEST(RegexGrammar, NegatedShorthandsAndDotStayWithinEveryDialect) {
  // Python's \S excludes U+00A0 and ECMAScript's `.` U+2028: neither is generated.
  for (const char* pattern : {"^\\S$", "^[^\\s]$", "^\\W$", "^.$"}) {
    SCOPED_TRACE(pattern);
    const std::string gbnf =
        "root ::= " + regex_to_gbnf(pattern, {.inside_json_string = true, .search = true});
    EXPECT_FALSE(whole_match(gbnf, "\"\xC2\xA0\""));      // U+00A0
    EXPECT_FALSE(whole_match(gbnf, "\"\xE2\x80\xA8\""));  // U+2028
  }
  const std::string not_space = "root ::= " + regex_to_gbnf("\\S");
  EXPECT_TRUE(whole_match(not_space, "x"));
  EXPECT_FALSE(whole_match(not_space, " "));
}

TEST(RegexGrammar, RefusesWhatAGrammarCannotFollow) {
  for (const char* pattern :
       {"(a", "a)", "[ab", "*a", "a**", "(?=a)", "(?i)a", "\\bword", "(a)\\1", "a$b", "\\p{L}",
        "[b-a]", "a{5,2}", "a{1001}", "a\\", "[\\D]", "a++", "\\012", "x{,}"}) {
    SCOPED_TRACE(pattern);
    try {
      regex_to_gbnf(pattern);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(regex_to_gbnf("^a|b$", {.search = true}), Error);
  EXPECT_NO_THROW(regex_to_gbnf("^(a|b)$", {.search = true}));
  EXPECT_NO_THROW(regex_to_gbnf("a{x}"));  // not a count: a literal brace, as in Python
}

}  // namespace
}  // namespace baton
