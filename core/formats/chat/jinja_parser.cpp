#include "core/formats/chat/jinja_parser.h"

#include <algorithm>

#include "core/formats/chat/jinja_builtins.h"

namespace baton::jinja {

Body parse(std::string_view source, int max_depth) {
  return Parser(tokenize(source), max_depth).parse_template();
}

namespace {

std::string location(const Token& token) {
  return std::to_string(token.line) + ":" + std::to_string(token.column);
}

std::string quoted_list(const std::vector<std::string_view>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += i + 1 == names.size() ? " or " : ", ";
    out.append("'").append(names[i]).append("'");
  }
  return out;
}

template <typename T>
std::unique_ptr<T> make(const Token& at) {
  return std::make_unique<T>(at.line);
}

}  // namespace

const Token& Parser::peek(size_t ahead) const {
  return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
}

const Token& Parser::next() {
  const Token& token = peek();
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return token;
}

bool Parser::at_operator(std::string_view op) const {
  return peek().kind == TokenKind::kOperator && peek().text == op;
}

bool Parser::at_name(std::string_view name) const {
  return peek().kind == TokenKind::kName && peek().text == name;
}

bool Parser::skip_operator(std::string_view op) {
  if (!at_operator(op)) return false;
  next();
  return true;
}

bool Parser::skip_name(std::string_view name) {
  if (!at_name(name)) return false;
  next();
  return true;
}

void Parser::expect_operator(std::string_view op) {
  if (!skip_operator(op)) fail(peek(), "'" + std::string(op) + "'");
}

void Parser::expect_name(std::string_view name) {
  if (!skip_name(name)) fail(peek(), "'" + std::string(name) + "'");
}

std::string Parser::expect_identifier(std::string_view what) {
  if (peek().kind != TokenKind::kName) fail(peek(), std::string(what));
  return next().text;
}

void Parser::expect_statement_end() {
  if (peek().kind != TokenKind::kStatementEnd) fail(peek(), "'%}'");
  next();
}

void Parser::fail(const Token& at, const std::string& expected) const {
  syntax_error(at.line, at.column, "expected " + expected + ", got " + describe(at));
}

Parser::Nesting::Nesting(Parser& parser, const Token& at) : parser_(parser) {
  if (++parser_.depth_ > parser_.max_depth_) {
    syntax_error(at.line, at.column,
                 "blocks and expressions nested deeper than " + std::to_string(parser_.max_depth_) +
                     " levels (the chat template depth limit)");
  }
}

void Parser::Chain::link(const Token& at) {
  ++links_;
  if (++parser_.depth_ > parser_.max_depth_) {
    syntax_error(at.line, at.column,
                 "an expression chained or nested deeper than " +
                     std::to_string(parser_.max_depth_) +
                     " levels (the chat template depth limit)");
  }
}

Body Parser::parse_template() {
  return parse_body({}, peek());
}

Body Parser::parse_body(const std::vector<std::string_view>& end_tags, const Token& opener) {
  Body body;
  while (true) {
    const Token& token = peek();
    switch (token.kind) {
      case TokenKind::kText: {
        auto text = make<TextStmt>(token);
        text->text = next().text;
        body.push_back(std::move(text));
        break;
      }
      case TokenKind::kOutputBegin: {
        next();
        auto output = make<OutputStmt>(token);
        output->expr = parse_tuple(true);
        if (peek().kind != TokenKind::kOutputEnd) fail(peek(), "'}}'");
        next();
        body.push_back(std::move(output));
        break;
      }
      case TokenKind::kStatementBegin: {
        const Token& tag = peek(1);
        if (tag.kind == TokenKind::kName &&
            std::find(end_tags.begin(), end_tags.end(), tag.text) != end_tags.end()) {
          next();
          return body;
        }
        next();
        body.push_back(parse_statement(end_tags));
        break;
      }
      case TokenKind::kEnd:
        if (end_tags.empty()) return body;
        syntax_error(token.line, token.column,
                     "unclosed '" + opener.text + "' block opened at " + location(opener) +
                         ": expected " + quoted_list(end_tags) + ", got end of template");
      default:
        fail(token, "template text or a tag");
    }
  }
}

StmtPtr Parser::parse_statement(const std::vector<std::string_view>& end_tags) {
  const Token& tag = peek();
  const Nesting nesting(*this, tag);
  if (tag.kind != TokenKind::kName) fail(tag, "a tag name");
  const std::string& name = tag.text;
  next();
  if (name == "for") return parse_for(tag);
  if (name == "if") return parse_if(tag);
  if (name == "set") return parse_set(tag);
  if (name == "macro") return parse_macro(tag);
  if (name == "call") return parse_call_block(tag);
  if (name == "filter") return parse_filter_block(tag);
  if (name == "break" || name == "continue") {
    if (loop_depth_ == 0) syntax_error(tag.line, tag.column, "'" + name + "' outside a for loop");
    expect_statement_end();
    return std::make_unique<Stmt>(name == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue,
                                  tag.line);
  }
  if (name == "generation") {
    expect_statement_end();
    auto block = make<BlockStmt>(tag);
    block->body = parse_body({"endgeneration"}, tag);
    next();
    expect_statement_end();
    return block;
  }
  std::string what = "unknown tag '" + name + "'";
  if (!end_tags.empty()) what = "unexpected tag '" + name + "': expected " + quoted_list(end_tags);
  syntax_error(tag.line, tag.column, what);
}

StmtPtr Parser::parse_for(const Token& tag) {
  auto loop = make<ForStmt>(tag);
  const bool parenthesized = skip_operator("(");
  do {
    loop->targets.push_back(expect_identifier("a loop variable name"));
  } while (skip_operator(","));
  if (parenthesized) expect_operator(")");
  expect_name("in");
  loop->iterable = parse_tuple(false);
  if (skip_name("if")) loop->filter = parse_expression();
  if (at_name("recursive"))
    syntax_error(peek().line, peek().column, "recursive loops are not supported");
  expect_statement_end();
  ++loop_depth_;
  loop->body = parse_body({"endfor", "else"}, tag);
  --loop_depth_;
  if (next().text == "else") {
    expect_statement_end();
    loop->else_body = parse_body({"endfor"}, tag);
    next();
  }
  expect_statement_end();
  return loop;
}

StmtPtr Parser::parse_if(const Token& tag) {
  auto branch = make<IfStmt>(tag);
  ExprPtr condition = parse_tuple(false);
  while (true) {
    expect_statement_end();
    Body body = parse_body({"elif", "else", "endif"}, tag);
    branch->branches.emplace_back(std::move(condition), std::move(body));
    const std::string end = next().text;
    if (end == "elif") {
      condition = parse_tuple(false);
      continue;
    }
    if (end == "else") {
      expect_statement_end();
      branch->else_body = parse_body({"endif"}, tag);
      next();
    }
    expect_statement_end();
    return branch;
  }
}

StmtPtr Parser::parse_set(const Token& tag) {
  const std::string first = expect_identifier("a variable name");
  if (peek().kind == TokenKind::kStatementEnd) {
    next();
    auto block = make<SetBlockStmt>(tag);
    block->target = first;
    block->body = parse_body({"endset"}, tag);
    next();
    expect_statement_end();
    return block;
  }
  auto set = make<SetStmt>(tag);
  set->targets.push_back(first);
  if (skip_operator(".")) {
    set->attribute = expect_identifier("an attribute name");
  } else {
    while (skip_operator(",")) set->targets.push_back(expect_identifier("a variable name"));
  }
  expect_operator("=");
  set->value = parse_tuple(true);
  expect_statement_end();
  return set;
}

MacroSignature Parser::parse_signature() {
  MacroSignature signature;
  expect_operator("(");
  while (!skip_operator(")")) {
    const Token& at = peek();
    signature.params.push_back(expect_identifier("a parameter name"));
    if (skip_operator("=")) {
      signature.defaults.push_back(parse_expression());
    } else if (!signature.defaults.empty() && signature.defaults.back()) {
      syntax_error(at.line, at.column, "parameter without a default after one with a default");
    } else {
      signature.defaults.emplace_back();
    }
    if (!skip_operator(",")) {
      expect_operator(")");
      break;
    }
  }
  return signature;
}

StmtPtr Parser::parse_macro(const Token& tag) {
  auto macro = make<MacroStmt>(tag);
  macro->name = expect_identifier("a macro name");
  macro->signature = parse_signature();
  expect_statement_end();
  // A loop around the definition does not enclose the body's statements.
  const int outer_loops = loop_depth_;
  loop_depth_ = 0;
  macro->body = parse_body({"endmacro"}, tag);
  loop_depth_ = outer_loops;
  next();
  expect_statement_end();
  return macro;
}

StmtPtr Parser::parse_call_block(const Token& tag) {
  auto block = make<CallBlockStmt>(tag);
  if (at_operator("(")) block->caller_signature = parse_signature();
  const Token& at = peek();
  block->call = parse_expression();
  if (block->call->kind != Expr::Kind::kCall) fail(at, "a macro call");
  expect_statement_end();
  const int outer_loops = loop_depth_;
  loop_depth_ = 0;
  block->body = parse_body({"endcall"}, tag);
  loop_depth_ = outer_loops;
  next();
  expect_statement_end();
  return block;
}

StmtPtr Parser::parse_filter_block(const Token& tag) {
  auto block = make<FilterBlockStmt>(tag);
  do {
    auto filter = make<FilterExpr>(peek());
    filter->name = expect_identifier("a filter name");
    filter->fn = find_filter(filter->name);
    if (skip_operator("(")) filter->args = parse_arguments();
    block->filters.push_back(std::move(filter));
  } while (skip_operator("|"));
  expect_statement_end();
  block->body = parse_body({"endfilter"}, tag);
  next();
  expect_statement_end();
  return block;
}

}  // namespace baton::jinja
