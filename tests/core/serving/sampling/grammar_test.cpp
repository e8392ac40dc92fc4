// GBNF grammars: the parser's errors, and the matcher accepting exactly the strings of a
// grammar's language (whole strings complete(), their prefixes accepts()), checked on grammars
// shaped like llama.cpp's documented examples (arithmetic, a list of items, JSON) and against
// std::regex on random strings.
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>

#include "baton/error.h"
#include "core/serving/sampling/grammar_constraint.h"
#include "core/serving/sampling/grammar_matcher.h"

namespace baton {
namespace {

GrammarMatcher matcher(const std::string& gbnf) {
  return GrammarMatcher(std::make_shared<const Grammar>(parse_gbnf(gbnf)));
}

// Whether `text` is a whole sentence of the grammar, fed in pieces of `chunk` bytes.
bool sentence(const std::string& gbnf, const std::string& text, size_t chunk = 1) {
  GrammarMatcher m = matcher(gbnf);
  for (size_t i = 0; i < text.size(); i += chunk) {
    if (!m.advance(std::string_view(text).substr(i, chunk))) return false;
  }
  return m.complete();
}

std::string parse_error(const std::string& gbnf) {
  try {
    parse_gbnf(gbnf);
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << gbnf;
  return "";
}

const char* const kArithmetic = R"gbnf(
root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*
)gbnf";

const char* const kList = R"gbnf(
root ::= item+
# Excludes the line breaks, as llama.cpp's list example does.
item ::= "- " [^\r\n\x0b\x0c\x85\u2028\u2029]+ "\n"
)gbnf";

// JSON (RFC 8259), written for this test in the style of llama.cpp's json.gbnf.
const char* const kJson = R"gbnf(
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]*)) ("." [0-9]+)? ([eE] [-+]? [0-9]+)? ws
ws     ::= ([ \t\n] ws)?
)gbnf";

TEST(Grammar, ArithmeticAcceptsOnlyItsLanguage) {
  for (const std::string good : {"1+2=3\n", "(a +b1)*c = x\n", "x=1\ny_2/3=4\n"}) {
    EXPECT_TRUE(sentence(kArithmetic, good)) << good;
  }
  for (const std::string bad : {"1+=2\n", "=3\n", "1+2=3", "A=1\n", "(1=2\n"}) {
    EXPECT_FALSE(sentence(kArithmetic, bad)) << bad;
  }
  GrammarMatcher m = matcher(kArithmetic);
  EXPECT_TRUE(m.accepts("(a+"));  // a prefix of a sentence
  EXPECT_FALSE(m.accepts("(+"));
}

TEST(Grammar, ListAcceptsOnlyItsLanguage) {
  EXPECT_TRUE(sentence(kList, "- milk\n- bread and wine\n"));
  EXPECT_TRUE(sentence(kList, "- naïve café\n", 3));  // characters split across chunks
  EXPECT_FALSE(sentence(kList, "- \n"));
  EXPECT_FALSE(sentence(kList, "* milk\n"));
  EXPECT_FALSE(sentence(kList, "- milk"));
  EXPECT_FALSE(sentence(kList, "- a\u2028b\n"));
}

TEST(Grammar, JsonAcceptsOnlyItsLanguage) {
  for (const std::string good :
       {R"({})", R"({"a": [1, -2.5e3, true, null, "x\"\u00e9"], "b": {"c": []}})",
        "{\n  \"k\": \"\xe2\x82\xac\"\n}"}) {
    EXPECT_TRUE(sentence(kJson, good)) << good;
  }
  for (const std::string bad : {R"({"a": 01})", R"({"a": [1,]})", R"({'a': 1})", R"({"a" 1})",
                                R"([1])", "{\"a\": \"\x01\"}", R"({"a": 1} x)"}) {
    EXPECT_FALSE(sentence(kJson, bad)) << bad;
  }
}

TEST(Grammar, AgreesWithARegexOnRandomStrings) {
  const std::string gbnf = R"(root ::= [ab]* ("c" | "dd") [0-9]{1,3} "."?)";
  const std::regex regex("[ab]*(c|dd)[0-9]{1,3}\\.?");
  std::mt19937 rng(5);
  const std::string alphabet = "abcd01.x";
  int matched = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    const int length = std::uniform_int_distribution<int>(0, 7)(rng);
    for (int j = 0; j < length; ++j) {
      text += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
    }
    const bool expected = std::regex_match(text, regex);
    matched += expected;
    EXPECT_EQ(sentence(gbnf, text), expected) << text;
  }
  EXPECT_GT(matched, 100);  // the random strings reach the language often enough to test it
}

TEST(Grammar, RepetitionCountsAndTheEnd) {
  const std::string gbnf = R"(root ::= "a"{2,3})";
  GrammarMatcher m = matcher(gbnf);
  ASSERT_TRUE(m.advance("a"));
  EXPECT_FALSE(m.complete());
  ASSERT_TRUE(m.advance("a"));
  EXPECT_TRUE(m.complete());
  EXPECT_FALSE(m.finished());  // a third "a" may follow
  ASSERT_TRUE(m.advance("a"));
  EXPECT_TRUE(m.finished());
  EXPECT_FALSE(m.advance("a"));
  EXPECT_TRUE(m.finished());  // a refused advance leaves the state as it was
}

TEST(Grammar, CharactersSplitAcrossTokens) {
  GrammarMatcher m = matcher(R"(root ::= "é" | [^a-z])");
  EXPECT_TRUE(m.accepts("\xC3"));      // could become é, or another non-letter
  EXPECT_TRUE(m.accepts("\xC3\xA9"));  // é
  EXPECT_FALSE(m.accepts("\xFF"));     // not UTF-8
  EXPECT_FALSE(m.accepts("b"));
  GrammarMatcher only_e = matcher(R"(root ::= "é")");
  EXPECT_FALSE(only_e.accepts("\xC3\xA8"));  // è
  EXPECT_FALSE(only_e.accepts("\xE2"));      // a three-byte character cannot be é
  // A lead byte whose smallest character is past the class: E0 starts U+0800 at the least, so
  // it cannot begin a quote.
  EXPECT_FALSE(matcher(R"(root ::= "\"")").accepts("\xE0"));
  ASSERT_TRUE(only_e.advance("\xC3"));
  EXPECT_FALSE(only_e.complete());  // half a character
  ASSERT_TRUE(only_e.advance("\xA9"));
  EXPECT_TRUE(only_e.complete());
}

TEST(Grammar, ErrorsNameTheProblemAndWhere) {
  EXPECT_NE(parse_error("root ::= item\n").find("rule 'item' is not defined"), std::string::npos);
  EXPECT_NE(parse_error("item ::= \"a\"\n").find("no rule named 'root'"), std::string::npos);
  EXPECT_NE(parse_error("root ::= root \"a\" | \"b\"\n").find("rule 'root' is left-recursive"),
            std::string::npos);
  EXPECT_NE(parse_error("root ::= x\nx ::= y? x \"a\"\ny ::= \"b\"\n").find("left-recursive"),
            std::string::npos);
  const std::string unclosed = parse_error("root ::= \"a\"\nitem ::= \"b");
  EXPECT_NE(unclosed.find("line 2"), std::string::npos) << unclosed;
  EXPECT_NE(unclosed.find("not closed"), std::string::npos) << unclosed;
  EXPECT_NE(parse_error("root = \"a\"").find("expected '::='"), std::string::npos);
  EXPECT_NE(parse_error(R"(root ::= "\q")").find("unknown escape"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"{5,2}").find("below its minimum"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"\nroot ::= \"b\"").find("defined twice"), std::string::npos);
}

// 2^11 ways to go on after "q": r1 ::= r2 "b" | r2 "c", r2 ::= r3 "b" | r3 "c", ... r12 ::= "a".
std::string ambiguous_after_q() {
  std::string gbnf = "root ::= \"q\" r1\n";
  for (int i = 1; i <= 11; ++i) {
    gbnf += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + " \"b\" | r" +
            std::to_string(i + 1) + " \"c\"\n";
  }
  return gbnf + "r12 ::= \"a\"\n";
}

TEST(Grammar, UntrustedGrammarsStayWithinBounds) {
  // Too ambiguous to follow: an error, not exponential work.
  GrammarMatcher ambiguous = matcher(ambiguous_after_q());
  try {
    ambiguous.advance("q");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too ambiguous"), std::string::npos) << e.what();
  }
  // Many paths to the same stacks are followed once: this finishes at once.
  GrammarMatcher converging = matcher(R"gbnf(root ::= ((" "?){0,2}){0,30} "x")gbnf");
  EXPECT_TRUE(converging.advance("      x"));
  EXPECT_TRUE(converging.complete());
  // Nesting that grows with the text stops at a bound.
  GrammarMatcher nesting = matcher(R"gbnf(root ::= "(" root ")" | "x")gbnf");
  EXPECT_THROW(nesting.advance(std::string(1100, '(')), Error);
  // What parsing may build is bounded too.
  EXPECT_NE(parse_error("root ::= \"" + std::string(200, 'a') + "\"{1000}").find("elements"),
            std::string::npos);
  EXPECT_NE(parse_error("root ::= " + std::string(200, '(') + "\"a\"" + std::string(200, ')'))
                .find("nested deeper than 128"),
            std::string::npos);
  EXPECT_NE(parse_error("root ::= []").find("matches nothing"), std::string::npos);
  EXPECT_NE(parse_error(R"(root ::= "\uD800")").find("surrogate"), std::string::npos);
  // A lone ED byte cannot begin a surrogate either.
  EXPECT_FALSE(matcher(R"(root ::= [\uD000-\uD7FF\uE000-\uFFFF])").accepts("\xED\xA0"));
}

TEST(Grammar, SpacesBeforeRepetitionsAsLlamaCppAllows) {
  EXPECT_TRUE(sentence(R"(root ::= "a" * "b" { 1 , 2 })", "aabb"));
  EXPECT_FALSE(sentence(R"(root ::= "a" * "b" { 1 , 2 })", "abbb"));
}

TEST(GrammarConstraint, AllowsTheTokensThatContinueAndEndsOnlyWhenComplete) {
  const auto pieces = TokenPieces::from({"a", "b", "ab", "ba", "", "\xC3", "\xA9", "c"}, {4});
  const auto grammar = std::make_shared<const Grammar>(parse_gbnf(R"(root ::= "a"+ "b" "é"?)"));
  GrammarConstraint constraint(grammar, pieces, true);
  std::vector<char> allowed;
  constraint.allowed(allowed);
  EXPECT_EQ(allowed, (std::vector<char>{1, 0, 1, 0, 0, 0, 0, 0}));
  constraint.accept(2);  // "ab": complete, and é may follow
  constraint.allowed(allowed);
  EXPECT_EQ(allowed, (std::vector<char>{0, 0, 0, 0, 1, 1, 0, 0}));
  constraint.accept(5);  // half of é
  constraint.allowed(allowed);
  EXPECT_EQ(allowed, (std::vector<char>{0, 0, 0, 0, 0, 0, 1, 0}));
  constraint.accept(6);
  EXPECT_TRUE(constraint.finished());
  // Without end tokens (ignore_eos), a complete text ends only where nothing may follow.
  GrammarConstraint no_end(grammar, pieces, false);
  no_end.accept(2);
  no_end.allowed(allowed);
  EXPECT_EQ(allowed, (std::vector<char>{0, 0, 0, 0, 0, 1, 0, 0}));
  EXPECT_THROW(no_end.accept(7), Error);
}

TEST(GrammarConstraint, AStateMetAgainGetsTheSameMask) {
  const auto pieces = TokenPieces::from({"a", "b", "", "ab"}, {2});
  GrammarConstraint constraint(
      std::make_shared<const Grammar>(parse_gbnf(R"(root ::= ("a" | "b")* "b")")), pieces, true);
  std::vector<char> first, again;
  constraint.allowed(first);
  constraint.accept(0);  // "a": the same state as before it
  constraint.allowed(again);
  EXPECT_EQ(first, again);
  EXPECT_EQ(first, (std::vector<char>{1, 1, 0, 1}));
  constraint.accept(1);  // "b": complete now, so the end token joins
  constraint.allowed(again);
  EXPECT_EQ(again, (std::vector<char>{1, 1, 1, 1}));
}

TEST(GrammarConstraint, APreparedMaskIsTheOneOfTheStateItWasPreparedIn) {
  const auto pieces = TokenPieces::from({"a", "b", "ab", "ba", "", "\xC3", "\xA9", "c"}, {4});
  const auto grammar = std::make_shared<const Grammar>(parse_gbnf(R"(root ::= "a"+ "b" "é"?)"));
  GrammarConstraint prepared(grammar, pieces, true);
  GrammarConstraint plain(grammar, pieces, true);
  std::vector<char> expected, got;
  for (const int32_t token : {0, 2, 5, 6}) {
    prepared.prepare();
    const GrammarConstraint copy = prepared;  // as a forked sample takes it, prepared mask too
    plain.allowed(expected);
    prepared.allowed(got);
    EXPECT_EQ(got, expected) << "before token " << token;
    GrammarConstraint copied = copy;
    copied.allowed(got);
    EXPECT_EQ(got, expected) << "copy, before token " << token;
    // Accepting moves on: the next mask is of the new state, not the one prepared before.
    prepared.accept(token);
    plain.accept(token);
  }
  EXPECT_TRUE(prepared.finished());
}

}  // namespace
}  // namespace baton
