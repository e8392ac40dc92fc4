#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

// The values a chat template computes with. They follow Python's semantics (what Jinja runs on):
// ints and floats, str, list, insertion-ordered dict, None, and Jinja's Undefined.
namespace baton::jinja {

class Value;
class Dict;
using List = std::vector<Value>;

// A runtime error without a location: the renderer adds the line of the expression that raised
// it before it leaves the template engine as a baton::Error.
class EvalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a missing variable, key or attribute evaluates to. It renders as nothing, is falsy and
// iterates as empty; any other use raises an error whose message is `reason`.
struct Undefined {
  std::string reason;
};

struct None {};

// A namespace() object: the one mutable value, so that `{% set ns.x = ... %}` inside a loop body
// is seen after the loop.
struct Namespace;

// Positional and keyword arguments of a call, filter or test.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// A function value: a built-in global (range, namespace, ...) or a template macro.
class Callable {
 public:
  virtual ~Callable() = default;
  virtual Value call(const CallArgs& args) const = 0;
};

class Value {
 public:
  using Data = std::variant<Undefined, None, bool, int64_t, double, std::string,
                            std::shared_ptr<const List>, std::shared_ptr<const Dict>,
                            std::shared_ptr<Namespace>, std::shared_ptr<const Callable>>;

  Value() : data_(Undefined{}) {}
  Value(Undefined u) : data_(std::move(u)) {}
  Value(None n) : data_(n) {}
  Value(bool b) : data_(b) {}
  Value(int i) : data_(int64_t{i}) {}
  Value(int64_t i) : data_(i) {}
  Value(double d) : data_(d) {}
  Value(std::string s) : data_(std::move(s)) {}
  Value(std::string_view s) : data_(std::string(s)) {}
  Value(const char* s) : data_(std::string(s)) {}
  Value(List items);
  // A Python tuple: a list that prints as (a, b). Dict items and `(a, b)` literals are tuples.
  static Value tuple(List items);
  Value(Dict dict);
  Value(std::shared_ptr<Namespace> ns) : data_(std::move(ns)) {}
  Value(std::shared_ptr<const Callable> fn) : data_(std::move(fn)) {}

  bool is_undefined() const { return std::holds_alternative<Undefined>(data_); }
  bool is_none() const { return std::holds_alternative<None>(data_); }
  bool is_bool() const { return std::holds_alternative<bool>(data_); }
  // int in Python's sense: bools are ints too.
  bool is_int() const { return is_bool() || std::holds_alternative<int64_t>(data_); }
  bool is_float() const { return std::holds_alternative<double>(data_); }
  bool is_number() const { return is_int() || is_float(); }
  bool is_string() const { return std::holds_alternative<std::string>(data_); }
  bool is_list() const { return std::holds_alternative<std::shared_ptr<const List>>(data_); }
  bool is_tuple() const { return is_list() && tuple_; }
  bool is_dict() const { return std::holds_alternative<std::shared_ptr<const Dict>>(data_); }
  bool is_namespace() const { return std::holds_alternative<std::shared_ptr<Namespace>>(data_); }
  bool is_callable() const {
    return std::holds_alternative<std::shared_ptr<const Callable>>(data_);
  }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const;   // an int or a bool
  double as_float() const;  // any number
  const std::string& as_string() const { return std::get<std::string>(data_); }
  const List& as_list() const { return *std::get<std::shared_ptr<const List>>(data_); }
  const Dict& as_dict() const { return *std::get<std::shared_ptr<const Dict>>(data_); }
  Namespace& as_namespace() const { return *std::get<std::shared_ptr<Namespace>>(data_); }
  const Callable& as_callable() const { return *std::get<std::shared_ptr<const Callable>>(data_); }
  const Undefined& as_undefined() const { return std::get<Undefined>(data_); }
  const Data& data() const { return data_; }

 private:
  Data data_;
  bool tuple_ = false;
};

// A str-keyed dict in insertion order, as Python's. Chat dicts are small, so lookup scans.
class Dict {
 public:
  using Item = std::pair<std::string, Value>;

  const Value* find(std::string_view key) const;
  // Replaces the value of an existing key in place, keeping its position.
  void set(std::string key, Value value);
  const std::vector<Item>& items() const { return items_; }
  size_t size() const { return items_.size(); }

 private:
  std::vector<Item> items_;
};

struct Namespace {
  Dict attributes;
};

// Python's truth value; Undefined is falsy.
bool truthy(const Value& v);
// Python's type name ('str', 'int', 'NoneType', ...), for error messages.
std::string type_name(const Value& v);
// str(v) as Jinja prints it: Undefined prints nothing, None prints "None".
std::string to_str(const Value& v);
// Python's repr(v), used for items inside printed lists and dicts.
std::string repr(const Value& v);

// How big a value would be written out: the bytes of its strings and keys plus one per other
// leaf, through nested lists and dicts (a part shared n times counts n times, as printing would
// write it), and how deeply it nests. Walks without recursion and stops counting once `limit`
// bytes are passed, so it is cheap on huge values.
struct Footprint {
  int64_t bytes = 0;
  int depth = 0;
};
Footprint footprint(const Value& v, int64_t limit);
// Python's repr of a float ("1.0", "1e-05", "inf").
std::string format_float(double d);
// Python's ==. Numbers compare by value across int, float and bool.
bool equals(const Value& a, const Value& b);
// Python's ordering (<0, 0, >0) of numbers, strings and lists; EvalError for other pairs.
int compare(const Value& a, const Value& b);
// Python's `item in container` for str (substring), list (an equal item) and dict (a key);
// false for Undefined.
bool contains(const Value& container, const Value& item);
// Throws EvalError with the reason when v is Undefined.
void require_defined(const Value& v);

// A string's characters (UTF-8 code points), which is what Python indexes and counts.
std::vector<std::string_view> utf8_chars(std::string_view s);
// len(v) for str (in code points), list and dict; Undefined has length 0.
int64_t length(const Value& v);
// The items a for loop visits: list items, dict keys, string characters; none for Undefined.
List iterate(const Value& v);

struct JsonOptions {
  int indent = -1;  // < 0: one line
  bool ensure_ascii = false;
  bool sort_keys = false;
  std::string item_separator;  // empty: Python's default for the indent
  std::string key_separator = ": ";
};
// json.dumps(v) with Python's formatting (transformers' tojson uses ensure_ascii=False).
std::string to_json(const Value& v, const JsonOptions& options);

Value from_json(const nlohmann::json& j);
Value from_json(const nlohmann::ordered_json& j);

}  // namespace baton::jinja
