#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace baton::jinja {

enum class TokenKind {
  kText,            // literal template text, whitespace control already applied
  kOutputBegin,     // {{
  kOutputEnd,       // }}
  kStatementBegin,  // {%
  kStatementEnd,    // %}
  kName,
  kString,  // text holds the decoded value
  kInteger,
  kFloat,
  kOperator,  // text holds the operator: + - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : |
  kEnd,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  int64_t int_value = 0;
  double float_value = 0;
  int line = 1;
  int column = 1;
};

// Splits a template into text and tag tokens with whitespace handled as transformers configures
// Jinja for chat templates: trim_blocks (the first newline after a block or comment tag is
// dropped), lstrip_blocks (spaces and tabs before a block or comment tag at the start of a line
// are dropped), `-` on a tag strips all whitespace on that side, `+` turns the block options off,
// "\r\n" and "\r" become "\n", and one trailing newline of the template is dropped. Comments
// produce no tokens. Throws baton::Error(kInvalidArgument) naming line:column on a lexical error.
std::vector<Token> tokenize(std::string_view source);

// Throws baton::Error(kInvalidArgument, "chat template: syntax error at L:C: <what>").
[[noreturn]] void syntax_error(int line, int column, const std::string& what);

// How a token reads in an error message: 'for', "'%}'", "end of template".
std::string describe(const Token& token);

}  // namespace baton::jinja
