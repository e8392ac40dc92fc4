// Expressions, from loosest to tightest binding as in Jinja: `x if c else y`, or, and, not,
// comparisons (chained, with in / not in), + -, ~, * / // %, **, unary - +, then postfix
// attribute/subscript/call, then filters `|` and tests `is` (so `a + b | trim` trims b).
#include <array>
#include <optional>

#include "core/formats/chat/jinja_builtins.h"
#include "core/formats/chat/jinja_parser.h"

namespace baton::jinja {

namespace {

template <typename T>
std::unique_ptr<T> make(const Token& at) {
  return std::make_unique<T>(at.line);
}

ExprPtr binary(const Token& at, BinaryOp op, ExprPtr left, ExprPtr right) {
  auto node = make<BinaryExpr>(at);
  node->op = op;
  node->left = std::move(left);
  node->right = std::move(right);
  return node;
}

bool is_keyword(const std::string& name) {
  static constexpr std::array<std::string_view, 7> kKeywords = {"and", "or", "not", "in",
                                                                "is",  "if", "else"};
  for (const std::string_view k : kKeywords) {
    if (name == k) return true;
  }
  return false;
}

}  // namespace

ExprPtr Parser::parse_expression(bool with_condition) {
  const Nesting nesting(*this, peek());
  ExprPtr expr = parse_or();
  if (!with_condition) return expr;
  Chain chain(*this);
  while (at_name("if")) {
    chain.link(peek());
    auto node = make<ConditionExpr>(next());
    node->then_expr = std::move(expr);
    node->condition = parse_or();
    if (skip_name("else")) node->else_expr = parse_expression();
    expr = std::move(node);
  }
  return expr;
}

ExprPtr Parser::parse_tuple(bool with_condition) {
  const Token& start = peek();
  ExprPtr first = parse_expression(with_condition);
  if (!at_operator(",")) return first;
  auto tuple = make<ListExpr>(start);
  tuple->tuple = true;
  tuple->items.push_back(std::move(first));
  while (skip_operator(",")) {
    // A trailing comma ends the tuple.
    if (peek().kind == TokenKind::kStatementEnd || peek().kind == TokenKind::kOutputEnd ||
        at_name("if")) {
      break;
    }
    tuple->items.push_back(parse_expression(with_condition));
  }
  return tuple;
}

ExprPtr Parser::parse_or() {
  ExprPtr left = parse_and();
  Chain chain(*this);
  while (at_name("or")) {
    chain.link(peek());
    const Token& at = next();
    left = binary(at, BinaryOp::kOr, std::move(left), parse_and());
  }
  return left;
}

ExprPtr Parser::parse_and() {
  ExprPtr left = parse_not();
  Chain chain(*this);
  while (at_name("and")) {
    chain.link(peek());
    const Token& at = next();
    left = binary(at, BinaryOp::kAnd, std::move(left), parse_not());
  }
  return left;
}

ExprPtr Parser::parse_not() {
  if (!at_name("not")) return parse_compare();
  const Nesting nesting(*this, peek());
  auto node = make<UnaryExpr>(next());
  node->op = UnaryOp::kNot;
  node->operand = parse_not();
  return node;
}

ExprPtr Parser::parse_compare() {
  const Token& start = peek();
  ExprPtr first = parse_math1();
  std::vector<std::pair<BinaryOp, ExprPtr>> rest;
  while (true) {
    static constexpr std::array<std::pair<std::string_view, BinaryOp>, 6> kOps = {{
        {"==", BinaryOp::kEq},
        {"!=", BinaryOp::kNe},
        {"<", BinaryOp::kLt},
        {"<=", BinaryOp::kLe},
        {">", BinaryOp::kGt},
        {">=", BinaryOp::kGe},
    }};
    std::optional<BinaryOp> op;
    for (const auto& [text, kind] : kOps) {
      if (at_operator(text)) op = kind;
    }
    if (op) {
      next();
    } else if (skip_name("in")) {
      op = BinaryOp::kIn;
    } else if (at_name("not") && peek(1).kind == TokenKind::kName && peek(1).text == "in") {
      next();
      next();
      op = BinaryOp::kNotIn;
    } else {
      break;
    }
    rest.emplace_back(*op, parse_math1());
  }
  if (rest.empty()) return first;
  auto node = make<CompareExpr>(start);
  node->first = std::move(first);
  node->rest = std::move(rest);
  return node;
}

ExprPtr Parser::parse_math1() {
  ExprPtr left = parse_concat();
  Chain chain(*this);
  while (at_operator("+") || at_operator("-")) {
    chain.link(peek());
    const Token& at = next();
    left = binary(at, at.text == "+" ? BinaryOp::kAdd : BinaryOp::kSub, std::move(left),
                  parse_concat());
  }
  return left;
}

ExprPtr Parser::parse_concat() {
  ExprPtr left = parse_math2();
  Chain chain(*this);
  while (at_operator("~")) {
    chain.link(peek());
    const Token& at = next();
    left = binary(at, BinaryOp::kConcat, std::move(left), parse_math2());
  }
  return left;
}

ExprPtr Parser::parse_math2() {
  ExprPtr left = parse_pow();
  Chain chain(*this);
  while (at_operator("*") || at_operator("/") || at_operator("//") || at_operator("%")) {
    chain.link(peek());
    const Token& at = next();
    const BinaryOp op = at.text == "*"   ? BinaryOp::kMul
                        : at.text == "/" ? BinaryOp::kDiv
                        : at.text == "%" ? BinaryOp::kMod
                                         : BinaryOp::kFloorDiv;
    left = binary(at, op, std::move(left), parse_pow());
  }
  return left;
}

ExprPtr Parser::parse_pow() {
  ExprPtr left = parse_unary(true);
  Chain chain(*this);
  while (at_operator("**")) {
    chain.link(peek());
    const Token& at = next();
    left = binary(at, BinaryOp::kPow, std::move(left), parse_unary(true));
  }
  return left;
}

ExprPtr Parser::parse_unary(bool with_filter) {
  ExprPtr node;
  if (at_operator("-") || at_operator("+")) {
    const Nesting nesting(*this, peek());
    auto unary = make<UnaryExpr>(peek());
    unary->op = next().text == "-" ? UnaryOp::kNeg : UnaryOp::kPos;
    unary->operand = parse_unary(false);
    node = std::move(unary);
  } else {
    node = parse_primary();
  }
  node = parse_postfix(std::move(node));
  return with_filter ? parse_filters(std::move(node)) : std::move(node);
}

ExprPtr Parser::parse_primary() {
  const Token& token = peek();
  switch (token.kind) {
    case TokenKind::kName: {
      if (is_keyword(token.text)) fail(token, "an expression");
      next();
      auto literal = make<LiteralExpr>(token);
      if (token.text == "true" || token.text == "True") {
        literal->value = true;
      } else if (token.text == "false" || token.text == "False") {
        literal->value = false;
      } else if (token.text == "none" || token.text == "None") {
        literal->value = None{};
      } else {
        auto name = make<NameExpr>(token);
        name->name = token.text;
        return name;
      }
      return literal;
    }
    case TokenKind::kString: {
      // Adjacent string literals join, as in Python.
      std::string text;
      while (peek().kind == TokenKind::kString) text += next().text;
      auto literal = make<LiteralExpr>(token);
      literal->value = std::move(text);
      return literal;
    }
    case TokenKind::kInteger:
    case TokenKind::kFloat: {
      next();
      auto literal = make<LiteralExpr>(token);
      literal->value =
          token.kind == TokenKind::kInteger ? Value(token.int_value) : Value(token.float_value);
      return literal;
    }
    case TokenKind::kOperator:
      if (token.text == "(" || token.text == "[" || token.text == "{") {
        return parse_collection(next());
      }
      [[fallthrough]];
    default:
      fail(token, "an expression");
  }
}

// After `(`, `[` or `{`: a parenthesized expression, a tuple, a list or a dict literal.
ExprPtr Parser::parse_collection(const Token& open) {
  if (open.text == "{") {
    auto dict = make<DictExpr>(open);
    while (!skip_operator("}")) {
      ExprPtr key = parse_expression();
      expect_operator(":");
      dict->items.emplace_back(std::move(key), parse_expression());
      if (!skip_operator(",")) {
        expect_operator("}");
        break;
      }
    }
    return dict;
  }
  const std::string close = open.text == "(" ? ")" : "]";
  auto list = make<ListExpr>(open);
  list->tuple = open.text == "(";
  while (!skip_operator(close)) {
    list->items.push_back(parse_expression());
    if (open.text == "(" && list->items.size() == 1 && skip_operator(")")) {
      return std::move(list->items.front());
    }
    if (!skip_operator(",")) {
      expect_operator(close);
      break;
    }
  }
  return list;
}

ExprPtr Parser::parse_postfix(ExprPtr node) {
  Chain chain(*this);
  while (at_operator(".") || at_operator("[") || at_operator("(")) {
    chain.link(peek());
    if (at_operator(".")) {
      const Token& at = next();
      if (peek().kind == TokenKind::kInteger) {
        auto item = make<GetItemExpr>(at);
        item->object = std::move(node);
        auto index = make<LiteralExpr>(peek());
        index->value = next().int_value;
        item->index = std::move(index);
        node = std::move(item);
      } else {
        auto attr = make<GetAttrExpr>(at);
        attr->object = std::move(node);
        attr->name = expect_identifier("an attribute name");
        node = std::move(attr);
      }
    } else if (at_operator("[")) {
      node = parse_subscript(std::move(node));
    } else if (at_operator("(")) {
      auto call = make<CallExpr>(next());
      call->callee = std::move(node);
      call->args = parse_arguments();
      node = std::move(call);
    }
  }
  return node;
}

ExprPtr Parser::parse_filters(ExprPtr node) {
  Chain chain(*this);
  while (at_operator("|") || at_name("is")) {
    chain.link(peek());
    node = at_operator("|") ? parse_filter(std::move(node)) : parse_test(std::move(node));
  }
  return node;
}

ExprPtr Parser::parse_filter(ExprPtr node) {
  auto filter = make<FilterExpr>(next());
  filter->input = std::move(node);
  filter->name = expect_identifier("a filter name");
  filter->fn = find_filter(filter->name);
  if (skip_operator("(")) filter->args = parse_arguments();
  return filter;
}

ExprPtr Parser::parse_test(ExprPtr node) {
  auto test = make<TestExpr>(next());
  test->input = std::move(node);
  test->negated = skip_name("not");
  test->name = expect_identifier("a test name");
  test->fn = find_test(test->name);
  const Token& arg = peek();
  if (skip_operator("(")) {
    test->args = parse_arguments();
  } else if (arg.kind == TokenKind::kString || arg.kind == TokenKind::kInteger ||
             arg.kind == TokenKind::kFloat ||
             (arg.kind == TokenKind::kOperator && (arg.text == "[" || arg.text == "{")) ||
             (arg.kind == TokenKind::kName && arg.text != "else" && arg.text != "or" &&
              arg.text != "and")) {
    // A single argument without parentheses: `x is divisibleby 3`, `x is sameas false`.
    test->args.positional.push_back(parse_postfix(parse_primary()));
  }
  return test;
}

ExprPtr Parser::parse_subscript(ExprPtr node) {
  const Token& open = next();
  ExprPtr start;
  if (!at_operator(":")) start = parse_expression();
  if (!skip_operator(":")) {
    expect_operator("]");
    auto item = make<GetItemExpr>(open);
    item->object = std::move(node);
    item->index = std::move(start);
    return item;
  }
  auto slice = make<SliceExpr>(open);
  slice->object = std::move(node);
  slice->start = std::move(start);
  if (!at_operator("]") && !at_operator(":")) slice->stop = parse_expression();
  if (skip_operator(":") && !at_operator("]")) slice->step = parse_expression();
  expect_operator("]");
  return slice;
}

Arguments Parser::parse_arguments() {
  Arguments args;
  while (!skip_operator(")")) {
    if (at_operator("*") || at_operator("**")) {
      syntax_error(peek().line, peek().column, "*args and **kwargs are not supported");
    }
    if (peek().kind == TokenKind::kName && peek(1).kind == TokenKind::kOperator &&
        peek(1).text == "=") {
      std::string name = next().text;
      next();
      args.keyword.emplace_back(std::move(name), parse_expression());
    } else {
      if (!args.keyword.empty()) fail(peek(), "a keyword argument after keyword arguments");
      args.positional.push_back(parse_expression());
    }
    if (!skip_operator(",")) {
      expect_operator(")");
      break;
    }
  }
  return args;
}

}  // namespace baton::jinja
