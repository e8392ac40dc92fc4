#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/formats/chat/jinja_ast.h"
#include "core/formats/chat/jinja_lexer.h"

namespace baton::jinja {

// Parses a template into statements. Throws baton::Error(kInvalidArgument) naming the line:column
// of a syntax error and what was expected there. Unknown filters and tests are not syntax errors:
// they are reported when evaluated, so a template whose unused branches name something Baton
// lacks still renders. Expressions and blocks nested deeper than `max_depth` are a syntax error
// too: the parser recurses once per level, and a template is untrusted input.
Body parse(std::string_view source, int max_depth);

// A recursive-descent parser over the lexer's tokens with Jinja's operator precedence. Statements
// are parsed in jinja_parser.cpp, expressions in jinja_expr_parser.cpp.
class Parser {
 public:
  Parser(std::vector<Token> tokens, int max_depth)
      : tokens_(std::move(tokens)), max_depth_(max_depth) {}
  Body parse_template();

 private:
  // One more level of nesting at `at` for as long as it lives; past max_depth a syntax error.
  class Nesting {
   public:
    Nesting(Parser& parser, const Token& at);
    ~Nesting() { --parser_.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Parser& parser_;
  };
  // A left-associative chain (`a + b + c`, `x.y.z`, `v | f | g`) deepens the tree by one level
  // per link without recursing here; evaluating and freeing the tree recurse through every level,
  // so links count against max_depth like nesting, until the chain's function returns.
  class Chain {
   public:
    explicit Chain(Parser& parser) : parser_(parser) {}
    ~Chain() { parser_.depth_ -= links_; }
    Chain(const Chain&) = delete;
    Chain& operator=(const Chain&) = delete;
    void link(const Token& at);

   private:
    Parser& parser_;
    int links_ = 0;
  };

  const Token& peek(size_t ahead = 0) const;
  const Token& next();
  bool at_operator(std::string_view op) const;
  bool at_name(std::string_view name) const;
  bool skip_operator(std::string_view op);
  bool skip_name(std::string_view name);
  void expect_operator(std::string_view op);
  void expect_name(std::string_view name);
  std::string expect_identifier(std::string_view what);
  void expect_statement_end();
  [[noreturn]] void fail(const Token& at, const std::string& expected) const;

  // Parses until a `{% tag %}` whose tag is in end_tags, leaving the tag name as the next token;
  // opener names the block for the error at the end of the template.
  Body parse_body(const std::vector<std::string_view>& end_tags, const Token& opener);
  StmtPtr parse_statement(const std::vector<std::string_view>& end_tags);
  StmtPtr parse_for(const Token& tag);
  StmtPtr parse_if(const Token& tag);
  StmtPtr parse_set(const Token& tag);
  StmtPtr parse_macro(const Token& tag);
  StmtPtr parse_call_block(const Token& tag);
  StmtPtr parse_filter_block(const Token& tag);
  MacroSignature parse_signature();

  ExprPtr parse_expression(bool with_condition = true);
  // An expression, or a tuple when commas follow: `{{ a, b }}`, `{% set t = 1, 2 %}`.
  ExprPtr parse_tuple(bool with_condition);
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  ExprPtr parse_postfix(ExprPtr node);
  ExprPtr parse_filters(ExprPtr node);
  ExprPtr parse_filter(ExprPtr node);
  ExprPtr parse_test(ExprPtr node);
  ExprPtr parse_subscript(ExprPtr node);
  ExprPtr parse_collection(const Token& open);
  Arguments parse_arguments();

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int loop_depth_ = 0;  // for loops enclosing the current statement, for break/continue
  int depth_ = 0;       // nested statements and expressions being parsed
  int max_depth_ = 0;
};

}  // namespace baton::jinja
