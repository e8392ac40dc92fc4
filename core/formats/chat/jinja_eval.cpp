// Expression evaluation with Python's semantics for operators, attribute and item access.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "baton/error.h"
#include "core/formats/chat/jinja_builtins.h"
#include "core/formats/chat/jinja_renderer.h"

namespace baton::jinja {

namespace {

std::string object_name(const Value& v) {
  return std::string("'").append(type_name(v)).append(" object'");
}

Value get_attr(const Value& object, const std::string& name) {
  require_defined(object);
  const Value* found = nullptr;
  if (object.is_dict()) found = object.as_dict().find(name);
  if (object.is_namespace()) found = object.as_namespace().attributes.find(name);
  if (found) return *found;
  return Undefined{object_name(object) + " has no attribute '" + name + "'"};
}

// Python's index normalisation: negative counts from the end; nullopt when out of range.
std::optional<size_t> list_index(int64_t index, size_t size) {
  if (index < 0) index += static_cast<int64_t>(size);
  if (index < 0 || index >= static_cast<int64_t>(size)) return std::nullopt;
  return static_cast<size_t>(index);
}

Value get_item(const Value& object, const Value& index) {
  require_defined(object);
  if (object.is_dict() || object.is_namespace()) {
    if (index.is_string()) return get_attr(object, index.as_string());
  } else if (object.is_list() && index.is_int()) {
    if (const auto i = list_index(index.as_int(), object.as_list().size())) {
      return object.as_list()[*i];
    }
  } else if (object.is_string() && index.is_int()) {
    const auto chars = utf8_chars(object.as_string());
    if (const auto i = list_index(index.as_int(), chars.size())) return chars[*i];
  }
  return Undefined{object_name(object) + " has no element " + repr(index)};
}

std::optional<int64_t> slice_bound(const Value& v) {
  if (v.is_undefined() || v.is_none()) return std::nullopt;
  if (!v.is_int()) throw EvalError("slice indices must be integers or None, not " + type_name(v));
  return v.as_int();
}

// Python's object[start:stop:step] on lists and strings.
Value slice(const Value& object, const Value& start_v, const Value& stop_v, const Value& step_v) {
  require_defined(object);
  const int64_t step = slice_bound(step_v).value_or(1);
  if (step == 0) throw EvalError("slice step cannot be zero");
  std::vector<std::string_view> chars;
  if (object.is_string()) {
    chars = utf8_chars(object.as_string());
  } else if (!object.is_list()) {
    throw EvalError("'" + type_name(object) + "' object is not subscriptable");
  }
  const auto n = static_cast<int64_t>(object.is_string() ? chars.size() : object.as_list().size());
  const auto clamp = [&](std::optional<int64_t> bound, int64_t fallback) {
    if (!bound) return fallback;
    int64_t i = *bound < 0 ? *bound + n : *bound;
    if (step > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  const int64_t start = clamp(slice_bound(start_v), step > 0 ? 0 : n - 1);
  const int64_t stop = clamp(slice_bound(stop_v), step > 0 ? n : -1);
  std::string text;
  List items;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (object.is_string()) {
      text += chars[static_cast<size_t>(i)];
    } else {
      items.push_back(object.as_list()[static_cast<size_t>(i)]);
    }
  }
  if (object.is_string()) return text;
  return object.is_tuple() ? Value::tuple(std::move(items)) : Value(std::move(items));
}

[[noreturn]] void unsupported(const char* op, const Value& a, const Value& b) {
  throw EvalError(std::string("unsupported operand type(s) for ") + op + ": '" + type_name(a) +
                  "' and '" + type_name(b) + "'");
}

// Python's integers do not overflow; a template's arithmetic that would leave int64 is refused
// rather than wrapped (or left undefined).
void refuse_overflow(bool overflowed, const char* op) {
  if (overflowed) throw EvalError(std::string("integer overflow in ") + op);
}

// base ** exponent (exponent >= 0) by repeated squaring, in as many steps as the exponent has
// bits. Squaring |base| >= 2 overflows only when the result would too, as the exponent's
// remaining bits multiply at least that square in.
int64_t int_power(int64_t base, int64_t exponent) {
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) refuse_overflow(__builtin_mul_overflow(result, base, &result), "**");
    exponent >>= 1;
    if (exponent > 0) refuse_overflow(__builtin_mul_overflow(base, base, &base), "**");
  }
  return result;
}

// `text * n` and `list * n` are checked before they are built, against the chat template output
// limit that every value is held to (Renderer::check_size): a list of long strings repeated
// copies every string.
Value repeat(const Value& sequence, int64_t times, int64_t max_bytes) {
  // An empty string or list counts as one byte a copy: repeating it costs steps all the same.
  const int64_t unit = std::max<int64_t>(1, footprint(sequence, max_bytes).bytes);
  if (times > 0 && times > max_bytes / unit) {
    throw EvalError("a repetition would write out more than " + std::to_string(max_bytes) +
                    " bytes (the chat template output limit)");
  }
  if (sequence.is_string()) {
    std::string out;
    for (int64_t i = 0; i < times; ++i) out += sequence.as_string();
    return out;
  }
  List out;
  for (int64_t i = 0; i < times; ++i) {
    out.insert(out.end(), sequence.as_list().begin(), sequence.as_list().end());
  }
  return out;
}

// `max_bytes`: the output limit, for repetitions.
Value arithmetic(BinaryOp op, const Value& a, const Value& b, int64_t max_bytes) {
  require_defined(a);
  require_defined(b);
  const bool ints = a.is_int() && b.is_int();
  const bool numbers = a.is_number() && b.is_number();
  switch (op) {
    case BinaryOp::kAdd:
      if (ints) {
        int64_t sum;
        const bool overflowed = __builtin_add_overflow(a.as_int(), b.as_int(), &sum);
        refuse_overflow(overflowed, "+");
        return sum;
      }
      if (numbers) return a.as_float() + b.as_float();
      if (a.is_string() && b.is_string()) return a.as_string() + b.as_string();
      if (a.is_list() && b.is_list()) {
        List out = a.as_list();
        out.insert(out.end(), b.as_list().begin(), b.as_list().end());
        return out;
      }
      unsupported("+", a, b);
    case BinaryOp::kSub:
      if (ints) {
        int64_t difference;
        const bool overflowed = __builtin_sub_overflow(a.as_int(), b.as_int(), &difference);
        refuse_overflow(overflowed, "-");
        return difference;
      }
      if (numbers) return a.as_float() - b.as_float();
      unsupported("-", a, b);
    case BinaryOp::kMul:
      if (ints) {
        int64_t product;
        const bool overflowed = __builtin_mul_overflow(a.as_int(), b.as_int(), &product);
        refuse_overflow(overflowed, "*");
        return product;
      }
      if (numbers) return a.as_float() * b.as_float();
      if ((a.is_string() || a.is_list()) && b.is_int()) return repeat(a, b.as_int(), max_bytes);
      if (a.is_int() && (b.is_string() || b.is_list())) return repeat(b, a.as_int(), max_bytes);
      unsupported("*", a, b);
    case BinaryOp::kDiv:
      if (!numbers) unsupported("/", a, b);
      if (b.as_float() == 0) throw EvalError("division by zero");
      return a.as_float() / b.as_float();
    case BinaryOp::kFloorDiv:
    case BinaryOp::kMod: {
      if (!numbers) unsupported(op == BinaryOp::kMod ? "%" : "//", a, b);
      if (b.as_float() == 0) throw EvalError("integer division or modulo by zero");
      // Python floors the quotient, so the remainder takes the divisor's sign.
      if (ints) {
        const int64_t x = a.as_int();
        const int64_t y = b.as_int();
        refuse_overflow(x == INT64_MIN && y == -1, op == BinaryOp::kMod ? "%" : "//");
        int64_t q = x / y;
        int64_t r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) {
          --q;
          r += y;
        }
        return op == BinaryOp::kMod ? r : q;
      }
      const double x = a.as_float();
      const double y = b.as_float();
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return op == BinaryOp::kMod ? r : std::floor(x / y);
    }
    case BinaryOp::kPow:
      if (!numbers) unsupported("**", a, b);
      if (ints && b.as_int() >= 0) {
        return int_power(a.as_int(), b.as_int());
      }
      return std::pow(a.as_float(), b.as_float());
    default:
      throw EvalError("unknown operator");
  }
}

Value binary(BinaryOp op, const Value& a, const Value& b, int64_t max_bytes) {
  switch (op) {
    case BinaryOp::kConcat:
      return to_str(a) + to_str(b);
    case BinaryOp::kEq:
      return equals(a, b);
    case BinaryOp::kNe:
      return !equals(a, b);
    case BinaryOp::kLt:
      return compare(a, b) < 0;
    case BinaryOp::kLe:
      return compare(a, b) <= 0;
    case BinaryOp::kGt:
      return compare(a, b) > 0;
    case BinaryOp::kGe:
      return compare(a, b) >= 0;
    case BinaryOp::kIn:
      return contains(b, a);
    case BinaryOp::kNotIn:
      return !contains(b, a);
    default:
      return arithmetic(op, a, b, max_bytes);
  }
}

Value unary(UnaryOp op, const Value& v) {
  if (op == UnaryOp::kNot) return !truthy(v);
  require_defined(v);
  if (!v.is_number()) {
    throw EvalError(std::string("bad operand type for unary ") + (op == UnaryOp::kNeg ? "-" : "+") +
                    ": '" + type_name(v) + "'");
  }
  if (op == UnaryOp::kPos) return v.is_int() ? Value(v.as_int()) : v;
  if (v.is_int()) {
    refuse_overflow(v.as_int() == INT64_MIN, "unary -");
    return -v.as_int();
  }
  return -v.as_float();
}

}  // namespace

Value Renderer::eval(const Expr& expr) {
  try {
    count_step();
    Value value = eval_node(expr);
    check_size(value);
    return value;
  } catch (const EvalError& e) {
    throw Error(ErrorCategory::kInvalidArgument,
                "chat template: error at line " + std::to_string(expr.line) + ": " + e.what());
  }
}

CallArgs Renderer::eval_args(const Arguments& args) {
  CallArgs out;
  for (const ExprPtr& arg : args.positional) out.positional.push_back(eval(*arg));
  for (const auto& [name, arg] : args.keyword) out.keyword.emplace_back(name, eval(*arg));
  return out;
}

Value Renderer::eval_call(const CallExpr& call, const Value* caller) {
  CallArgs args = eval_args(call.args);
  if (caller) args.keyword.emplace_back("caller", *caller);
  if (call.callee->kind == Expr::Kind::kGetAttr) {
    // A method call: object.name(args).
    const auto& attr = static_cast<const GetAttrExpr&>(*call.callee);
    const Value object = eval(*attr.object);
    require_defined(object);
    if (std::optional<Value> result = call_method(object, attr.name, args)) return *result;
    const Value member = get_attr(object, attr.name);
    if (!member.is_callable()) {
      throw EvalError("'" + type_name(object) + "' object has no method '" + attr.name + "'");
    }
    return member.as_callable().call(args);
  }
  const Value callee = eval(*call.callee);
  require_defined(callee);
  if (!callee.is_callable()) throw EvalError("'" + type_name(callee) + "' object is not callable");
  return callee.as_callable().call(args);
}

Value Renderer::eval_node(const Expr& expr) {
  switch (expr.kind) {
    case Expr::Kind::kLiteral:
      return static_cast<const LiteralExpr&>(expr).value;
    case Expr::Kind::kName:
      return lookup(static_cast<const NameExpr&>(expr).name);
    case Expr::Kind::kList: {
      const auto& list = static_cast<const ListExpr&>(expr);
      List items;
      for (const ExprPtr& item : list.items) items.push_back(eval(*item));
      return list.tuple ? Value::tuple(std::move(items)) : Value(std::move(items));
    }
    case Expr::Kind::kDict: {
      Dict dict;
      for (const auto& [key_expr, value_expr] : static_cast<const DictExpr&>(expr).items) {
        const Value key = eval(*key_expr);
        if (!key.is_string()) throw EvalError("dict keys must be strings, got " + type_name(key));
        dict.set(key.as_string(), eval(*value_expr));
      }
      return dict;
    }
    case Expr::Kind::kGetAttr: {
      const auto& attr = static_cast<const GetAttrExpr&>(expr);
      return get_attr(eval(*attr.object), attr.name);
    }
    case Expr::Kind::kGetItem: {
      const auto& item = static_cast<const GetItemExpr&>(expr);
      return get_item(eval(*item.object), eval(*item.index));
    }
    case Expr::Kind::kSlice: {
      const auto& s = static_cast<const SliceExpr&>(expr);
      const auto part = [&](const ExprPtr& e) { return e ? eval(*e) : Value(); };
      return slice(eval(*s.object), part(s.start), part(s.stop), part(s.step));
    }
    case Expr::Kind::kCall:
      return eval_call(static_cast<const CallExpr&>(expr), nullptr);
    case Expr::Kind::kFilter: {
      const auto& filter = static_cast<const FilterExpr&>(expr);
      if (!filter.fn) throw EvalError("unknown filter '" + filter.name + "'");
      const Value input = eval(*filter.input);
      return filter.fn(input, eval_args(filter.args));
    }
    case Expr::Kind::kTest: {
      const auto& test = static_cast<const TestExpr&>(expr);
      if (!test.fn) throw EvalError("unknown test '" + test.name + "'");
      const Value input = eval(*test.input);
      return test.fn(input, eval_args(test.args)) != test.negated;
    }
    case Expr::Kind::kUnary: {
      const auto& u = static_cast<const UnaryExpr&>(expr);
      return unary(u.op, eval(*u.operand));
    }
    case Expr::Kind::kBinary: {
      const auto& b = static_cast<const BinaryExpr&>(expr);
      Value left = eval(*b.left);
      // and/or short-circuit and give an operand, as in Python.
      if (b.op == BinaryOp::kAnd) return truthy(left) ? eval(*b.right) : left;
      if (b.op == BinaryOp::kOr) return truthy(left) ? left : eval(*b.right);
      return binary(b.op, left, eval(*b.right), limits_.max_output_bytes);
    }
    case Expr::Kind::kCompare: {
      const auto& c = static_cast<const CompareExpr&>(expr);
      Value left = eval(*c.first);
      for (const auto& [op, right_expr] : c.rest) {
        Value right = eval(*right_expr);
        if (!truthy(binary(op, left, right, limits_.max_output_bytes))) return false;
        left = std::move(right);
      }
      return true;
    }
    case Expr::Kind::kCondition: {
      const auto& c = static_cast<const ConditionExpr&>(expr);
      if (truthy(eval(*c.condition))) return eval(*c.then_expr);
      if (c.else_expr) return eval(*c.else_expr);
      return Undefined{"the condition of an inline if without else was false"};
    }
  }
  throw EvalError("unknown expression");
}

}  // namespace baton::jinja
