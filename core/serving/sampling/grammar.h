#pragma once

// A context-free grammar in llama.cpp's GBNF, over Unicode code points, as the constrained
// sampler walks it (grammar_matcher.h). GBNF: rules `name ::= alternatives`, alternatives
// separated by `|`, each a sequence of string literals ("a\n"), character classes ([a-z], [^"],
// with \x.., \u...., \U........ escapes), `.` (any character), rule names and parenthesized
// groups, each optionally followed by `*`, `+`, `?` or `{m}`, `{m,}`, `{m,n}`; `#` starts a
// comment. Generation starts at the rule named `root`.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton {

struct GrammarElement {
  // A character class: one code point within `ranges` (inclusive), or outside them when
  // `negated`. A rule reference when rule >= 0.
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  bool negated = false;
  int32_t rule = -1;

  bool is_rule() const { return rule >= 0; }
  bool matches(uint32_t code_point) const;
  // Whether some code point in [low, high] matches (for a character not yet complete).
  bool matches_any(uint32_t low, uint32_t high) const;
};

// One way to match a rule: elements in order; empty matches the empty string.
using GrammarAlternative = std::vector<GrammarElement>;

struct Grammar {
  // By rule id. Repetitions and groups become rules of their own, named after the rule they
  // appear in.
  std::vector<std::vector<GrammarAlternative>> rules;
  std::vector<std::string> names;
  int32_t root = -1;
};

// Parses GBNF. Throws Error(kInvalidArgument) naming the line and column of a syntax error, a
// rule used but never defined, a missing root rule, or a left-recursive rule (which the matcher
// could expand without end).
Grammar parse_gbnf(std::string_view text);

}  // namespace baton
