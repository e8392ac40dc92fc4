#pragma once

// Writing GBNF (grammar.h) text from code: the compilers of JSON Schemas, regular expressions
// and choice lists write GBNF, so that every constraint is parsed, bounded and matched by the
// one grammar engine.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton::gbnf {

// The value of a hexadecimal digit, or -1 for another character (GBNF's and regular
// expressions' \x and \u escapes).
inline int hex_digit(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

// Inclusive code point ranges.
using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;

// Sorted, with overlapping and adjacent ranges merged.
Ranges normalized(Ranges ranges);
// The code points of `ranges` that are not in `removed`.
Ranges subtract(const Ranges& ranges, const Ranges& removed);

// A string literal matching `text` (UTF-8) exactly: "..." with quotes, backslashes and control
// characters escaped.
std::string literal(std::string_view text);
// A character class: [..], or [^..] when `negated`. `ranges` must not be empty unless negated.
std::string char_class(const Ranges& ranges, bool negated);

// A whole grammar for exactly one of `choices` (vLLM's guided_choice); throws
// Error(kInvalidArgument) when there are none.
std::string choice_grammar(const std::vector<std::string>& choices);

}  // namespace baton::gbnf
