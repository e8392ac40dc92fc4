#pragma once

// The compiler behind regex_to_gbnf (regex_grammar.h), internal to it: regex_grammar.cpp parses
// the pattern and its quantifiers, regex_char_class.cpp its escapes and character classes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/serving/sampling/gbnf_text.h"
#include "core/serving/sampling/regex_grammar.h"

namespace baton::detail {

class RegexCompiler {
 public:
  RegexCompiler(std::string_view pattern, const RegexOptions& options)
      : pattern_(pattern), options_(options) {}

  std::string compile();

 private:
  [[noreturn]] void fail(size_t at, const std::string& what) const;

  // A final '$' that is not escaped.
  static bool ends_with_anchor(std::string_view body);

  bool at_end() const { return pos_ >= end_; }
  char peek() const { return at_end() ? '\0' : pattern_[pos_]; }

  std::string alternation(int depth);
  std::string sequence(int depth);
  std::string atom(int depth);
  // After '(': (?:, (?P<name>, (?<name> are plain groups; lookaround and flags are refused.
  void group_prefix(size_t start);
  std::string quantified(std::string item);
  // {m}, {m,}, {m,n} or {,n} at pos_, read into min and max; false (pos_ unmoved) when the brace
  // does not open a count, and is then a literal as in Python.
  bool counted(int& min, int& max);
  bool counted_at(size_t at) const;
  // Where the count opened by the brace at `at` ends (past its '}'), or 0 when it is no count.
  size_t count_end(size_t at, int& low, int& high) const;

  uint32_t next_code_point();
  std::string escape_outside_class();
  static gbnf::Ranges shorthand(char c);
  // The ranges a negated shorthand excludes: the shorthand's and everything past ASCII.
  static gbnf::Ranges negated_shorthand(char c);
  // The character an escape other than a shorthand stands for; pos_ is on the character after
  // the backslash.
  uint32_t escaped_char(size_t start, bool in_class);
  uint32_t hex(int digits, size_t start);
  std::string char_class();
  // One character from `ranges` (or from outside them when `negated`) as an expression.
  std::string ranges_expression(const gbnf::Ranges& ranges, bool negated) const;
  // `.`: any character but a line terminator. Inside a JSON string only, `dot` false gives any
  // character at all (JSON Schema's unanchored sides), both without control characters.
  std::string any_char(bool dot) const;
  std::string character(uint32_t cp) const;

  std::string_view pattern_;
  RegexOptions options_;
  size_t pos_ = 0;
  size_t end_ = 0;
  bool top_level_alternatives_ = false;
};

}  // namespace baton::detail
