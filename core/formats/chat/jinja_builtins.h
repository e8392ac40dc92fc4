#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/formats/chat/jinja_ast.h"
#include "core/formats/chat/jinja_value.h"

// What templates can call without defining it: filters (jinja_filters.cpp), tests
// (jinja_tests.cpp), methods of str and dict (jinja_methods.cpp) and global functions
// (jinja_globals.cpp). Each throws EvalError on bad arguments.
namespace baton::jinja {

// null when there is no such filter or test.
FilterFn find_filter(std::string_view name);
TestFn find_test(std::string_view name);

// object.name(args) for the str and dict methods templates use (list methods that mutate are
// absent, as in transformers' immutable sandbox); nullopt when object has no such method.
std::optional<Value> call_method(const Value& object, std::string_view name, const CallArgs& args);

// range, namespace, dict, raise_exception and strftime_now.
const Dict& builtin_globals();

// Binds call arguments to a Python-style signature: params[i] by position or by name; the first
// `required` must be given. Parameters not given come back Undefined, for the caller's default.
std::vector<Value> bind_args(std::string_view function, const CallArgs& args,
                             std::initializer_list<std::string_view> params, size_t required);

// Applies the test named by a filter argument (select, selectattr, reject, rejectattr).
bool apply_named_test(const Value& name, const Value& input, const CallArgs& args);

// String helpers shared by filters and methods. Case changes apply to ASCII letters only.
std::string ascii_upper(std::string_view s);
std::string ascii_lower(std::string_view s);
std::string capitalize(std::string_view s);  // first letter upper, the rest lower
// str.replace: count < 0 replaces every occurrence.
std::string replace(std::string_view s, std::string_view old, std::string_view with, int64_t count);

// str.strip()-style trimming of the given characters, or of whitespace when chars is Undefined
// or None.
std::string strip_chars(std::string_view s, const Value& chars, bool left, bool right);

}  // namespace baton::jinja
