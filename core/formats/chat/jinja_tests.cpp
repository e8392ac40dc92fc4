// Jinja's tests: `x is defined`, `x is divisibleby(3)`, `x is equalto 'user'`, ...
#include <cctype>
#include <cmath>
#include <string>
#include <unordered_map>

#include "core/formats/chat/jinja_builtins.h"

namespace baton::jinja {

namespace {

Value one_arg(std::string_view test, const CallArgs& args) {
  return bind_args(test, args, {"other"}, 1)[0];
}

void no_args(std::string_view test, const CallArgs& args) {
  bind_args(test, args, {}, 0);
}

// The result of a test that takes no arguments, after checking none were given.
bool checked(std::string_view test, const CallArgs& args, bool result) {
  no_args(test, args);
  return result;
}

double number(std::string_view test, const Value& v) {
  if (!v.is_number())
    throw EvalError("test '" + std::string(test) + "' needs a number, got " + type_name(v));
  return v.as_float();
}

bool is_defined(const Value& v, const CallArgs& a) {
  return checked("defined", a, !v.is_undefined());
}
bool is_undefined(const Value& v, const CallArgs& a) {
  return checked("undefined", a, v.is_undefined());
}
bool is_none(const Value& v, const CallArgs& a) {
  return checked("none", a, v.is_none());
}
bool is_boolean(const Value& v, const CallArgs& a) {
  return checked("boolean", a, v.is_bool());
}
bool is_true(const Value& v, const CallArgs& a) {
  return checked("true", a, v.is_bool() && v.as_bool());
}
bool is_false(const Value& v, const CallArgs& a) {
  return checked("false", a, v.is_bool() && !v.as_bool());
}
// Python's bool is an int, but Jinja's integer test says no to it.
bool is_integer(const Value& v, const CallArgs& a) {
  return checked("integer", a, v.is_int() && !v.is_bool());
}
bool is_float(const Value& v, const CallArgs& a) {
  return checked("float", a, v.is_float());
}
bool is_number(const Value& v, const CallArgs& a) {
  return checked("number", a, v.is_number());
}
bool is_string(const Value& v, const CallArgs& a) {
  return checked("string", a, v.is_string());
}
bool is_mapping(const Value& v, const CallArgs& a) {
  return checked("mapping", a, v.is_dict());
}
bool is_callable(const Value& v, const CallArgs& a) {
  return checked("callable", a, v.is_callable());
}

// Undefined iterates as empty, so Jinja counts it iterable (and a sequence).
bool is_iterable(const Value& v, const CallArgs& a) {
  no_args("iterable", a);
  return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict();
}
bool is_sequence(const Value& v, const CallArgs& a) {
  no_args("sequence", a);
  return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict();
}

bool is_even(const Value& v, const CallArgs& a) {
  no_args("even", a);
  return std::fmod(number("even", v), 2.0) == 0.0;
}
bool is_odd(const Value& v, const CallArgs& a) {
  no_args("odd", a);
  return std::fabs(std::fmod(number("odd", v), 2.0)) == 1.0;
}
bool is_divisibleby(const Value& v, const CallArgs& a) {
  const double divisor = number("divisibleby", one_arg("divisibleby", a));
  if (divisor == 0) throw EvalError("divisibleby: division by zero");
  return std::fmod(number("divisibleby", v), divisor) == 0.0;
}

bool is_lower(const Value& v, const CallArgs& a) {
  no_args("lower", a);
  if (!v.is_string()) return false;
  bool cased = false;
  for (const char c : v.as_string()) {
    if (std::isupper(static_cast<unsigned char>(c))) return false;
    cased = cased || std::islower(static_cast<unsigned char>(c));
  }
  return cased;
}
bool is_upper(const Value& v, const CallArgs& a) {
  no_args("upper", a);
  if (!v.is_string()) return false;
  bool cased = false;
  for (const char c : v.as_string()) {
    if (std::islower(static_cast<unsigned char>(c))) return false;
    cased = cased || std::isupper(static_cast<unsigned char>(c));
  }
  return cased;
}

bool is_eq(const Value& v, const CallArgs& a) {
  return equals(v, one_arg("eq", a));
}
bool is_ne(const Value& v, const CallArgs& a) {
  return !equals(v, one_arg("ne", a));
}
bool is_lt(const Value& v, const CallArgs& a) {
  return compare(v, one_arg("lt", a)) < 0;
}
bool is_le(const Value& v, const CallArgs& a) {
  return compare(v, one_arg("le", a)) <= 0;
}
bool is_gt(const Value& v, const CallArgs& a) {
  return compare(v, one_arg("gt", a)) > 0;
}
bool is_ge(const Value& v, const CallArgs& a) {
  return compare(v, one_arg("ge", a)) >= 0;
}
bool is_in(const Value& v, const CallArgs& a) {
  return contains(one_arg("in", a), v);
}

// Python's `is`: the same object. Scalars of one type compare by value, which is what identity
// means for the None, True and False that templates test this way.
bool is_sameas(const Value& v, const CallArgs& a) {
  const Value other = one_arg("sameas", a);
  if (v.data().index() != other.data().index()) return false;
  if (v.is_list()) return &v.as_list() == &other.as_list();
  if (v.is_dict()) return &v.as_dict() == &other.as_dict();
  return equals(v, other);
}

const std::unordered_map<std::string_view, TestFn>& tests() {
  static const std::unordered_map<std::string_view, TestFn> table = {
      {"defined", is_defined},
      {"undefined", is_undefined},
      {"none", is_none},
      {"boolean", is_boolean},
      {"true", is_true},
      {"false", is_false},
      {"integer", is_integer},
      {"float", is_float},
      {"number", is_number},
      {"string", is_string},
      {"mapping", is_mapping},
      {"callable", is_callable},
      {"iterable", is_iterable},
      {"sequence", is_sequence},
      {"even", is_even},
      {"odd", is_odd},
      {"divisibleby", is_divisibleby},
      {"lower", is_lower},
      {"upper", is_upper},
      {"eq", is_eq},
      {"equalto", is_eq},
      {"==", is_eq},
      {"ne", is_ne},
      {"!=", is_ne},
      {"lt", is_lt},
      {"lessthan", is_lt},
      {"<", is_lt},
      {"le", is_le},
      {"<=", is_le},
      {"gt", is_gt},
      {"greaterthan", is_gt},
      {">", is_gt},
      {"ge", is_ge},
      {">=", is_ge},
      {"in", is_in},
      {"sameas", is_sameas},
  };
  return table;
}

}  // namespace

TestFn find_test(std::string_view name) {
  const auto it = tests().find(name);
  return it == tests().end() ? nullptr : it->second;
}

bool apply_named_test(const Value& name, const Value& input, const CallArgs& args) {
  if (!name.is_string()) throw EvalError("a test name must be a string, got " + type_name(name));
  const TestFn test = find_test(name.as_string());
  if (!test) throw EvalError("unknown test '" + name.as_string() + "'");
  return test(input, args);
}

}  // namespace baton::jinja
