#include <ctime>
#include <string>

#include "baton/error.h"
#include "core/formats/chat/jinja_builtins.h"

namespace baton::jinja {

std::vector<Value> bind_args(std::string_view function, const CallArgs& args,
                             std::initializer_list<std::string_view> params, size_t required) {
  const std::vector<std::string_view> names(params);
  std::vector<Value> bound(names.size());
  std::vector<bool> given(names.size(), false);
  const std::string fn(function);
  if (args.positional.size() > names.size()) {
    throw EvalError(fn + "() takes at most " + std::to_string(names.size()) + " argument(s) (" +
                    std::to_string(args.positional.size()) + " given)");
  }
  for (size_t i = 0; i < args.positional.size(); ++i) {
    bound[i] = args.positional[i];
    given[i] = true;
  }
  for (const auto& [name, value] : args.keyword) {
    size_t i = 0;
    while (i < names.size() && names[i] != name) ++i;
    if (i == names.size())
      throw EvalError(fn + "() got an unexpected keyword argument '" + name + "'");
    if (given[i]) throw EvalError(fn + "() got multiple values for argument '" + name + "'");
    bound[i] = value;
    given[i] = true;
  }
  for (size_t i = 0; i < required; ++i) {
    if (!given[i]) {
      throw EvalError(fn + "() missing required argument '" + std::string(names[i]) + "'");
    }
  }
  return bound;
}

namespace {

// A global function implemented by a plain C++ function.
class Builtin : public Callable {
 public:
  using Fn = Value (*)(const CallArgs& args);
  explicit Builtin(Fn fn) : fn_(fn) {}
  Value call(const CallArgs& args) const override { return fn_(args); }

 private:
  Fn fn_;
};

int64_t int_arg(const Value& v, std::string_view function) {
  if (!v.is_int()) {
    throw EvalError("'" + type_name(v) + "' object cannot be interpreted as an integer in " +
                    std::string(function) + "()");
  }
  return v.as_int();
}

// As the sandbox transformers renders in, which refuses ranges longer than this.
constexpr int64_t kMaxRange = 100000;

Value range(const CallArgs& args) {
  if (!args.keyword.empty()) throw EvalError("range() takes no keyword arguments");
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3) throw EvalError("range() takes 1 to 3 arguments");
  int64_t start = 0;
  int64_t stop = 0;
  int64_t step = 1;
  if (p.size() == 1) {
    stop = int_arg(p[0], "range");
  } else {
    start = int_arg(p[0], "range");
    stop = int_arg(p[1], "range");
    if (p.size() == 3) step = int_arg(p[2], "range");
  }
  if (step == 0) throw EvalError("range() arg 3 must not be zero");
  List items;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (static_cast<int64_t>(items.size()) >= kMaxRange) {
      throw EvalError("range() is too big (more than " + std::to_string(kMaxRange) + " items)");
    }
    items.emplace_back(i);
  }
  return items;
}

// namespace(key=value, ...), optionally starting from a dict: a mutable attribute holder.
Value make_namespace(const CallArgs& args) {
  auto ns = std::make_shared<Namespace>();
  if (args.positional.size() > 1)
    throw EvalError("namespace() takes at most 1 positional argument");
  if (!args.positional.empty()) {
    if (!args.positional[0].is_dict()) throw EvalError("namespace() argument must be a dict");
    for (const auto& [key, value] : args.positional[0].as_dict().items()) {
      ns->attributes.set(key, value);
    }
  }
  for (const auto& [key, value] : args.keyword) ns->attributes.set(key, value);
  return ns;
}

Value make_dict(const CallArgs& args) {
  if (!args.positional.empty()) throw EvalError("dict() takes only keyword arguments here");
  Dict dict;
  for (const auto& [key, value] : args.keyword) dict.set(key, value);
  return dict;
}

// transformers' raise_exception: the template's own message, which callers show to users.
Value raise_exception(const CallArgs& args) {
  const auto bound = bind_args("raise_exception", args, {"message"}, 1);
  throw Error(ErrorCategory::kInvalidArgument, "chat template: " + to_str(bound[0]));
}

// transformers' strftime_now: the local time formatted by strftime, e.g. Llama 3.1's
// "Today Date: 26 Jul 2024".
Value strftime_now(const CallArgs& args) {
  const auto bound = bind_args("strftime_now", args, {"format"}, 1);
  if (!bound[0].is_string()) throw EvalError("strftime_now() format must be a string");
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::string out(256, '\0');
  const size_t n = std::strftime(out.data(), out.size(), bound[0].as_string().c_str(), &local);
  out.resize(n);
  return out;
}

Dict make_globals() {
  Dict globals;
  const auto add = [&](const char* name, Builtin::Fn fn) {
    globals.set(name, Value(std::shared_ptr<const Callable>(std::make_shared<Builtin>(fn))));
  };
  add("range", range);
  add("namespace", make_namespace);
  add("dict", make_dict);
  add("raise_exception", raise_exception);
  add("strftime_now", strftime_now);
  return globals;
}

}  // namespace

const Dict& builtin_globals() {
  static const Dict globals = make_globals();
  return globals;
}

}  // namespace baton::jinja
