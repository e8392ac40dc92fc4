#pragma once

// Regular expressions compiled to GBNF expressions (grammar.h), for vLLM's guided_regex,
// `baton run --regex` and JSON Schema's `pattern`. The syntax is the common subset of Python's
// and ECMAScript's: literals and escapes, `.`, classes with ranges and \d \w \s (\D \W \S
// outside classes), groups (capturing, (?:...), named), `|`, and the quantifiers * + ? {m}
// {m,} {m,n} {,n}, lazy or not (the language is the same). Anchors are taken at the very start
// and end only. Backreferences, lookaround, word boundaries, flags and Unicode properties are
// refused: a grammar cannot follow them.

#include <string>
#include <string_view>

namespace baton {

struct RegexOptions {
  // The text is the inside of a JSON string: characters are written as JSON escapes them, and
  // classes generate no control characters (a subset of their language, so what is generated
  // still matches).
  bool inside_json_string = false;
  // JSON Schema's rule: the pattern matches anywhere unless anchored with ^ and $. Otherwise the
  // whole text must match, with or without anchors.
  bool search = false;
};

// A GBNF expression (not a whole grammar) over the pattern's language. Throws
// Error(kInvalidArgument) naming the construct and its offset when the pattern is malformed or
// uses what a grammar cannot express.
std::string regex_to_gbnf(std::string_view pattern, const RegexOptions& options = {});

}  // namespace baton
