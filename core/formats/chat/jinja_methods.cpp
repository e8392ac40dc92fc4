// Python methods of str and dict that chat templates call: content.strip(), role.title(),
// message.get('tool_calls'), tool.items(), ...
#include <algorithm>
#include <cctype>
#include <string>

#include "core/formats/chat/jinja_builtins.h"

namespace baton::jinja {

namespace {

constexpr std::string_view kWhitespace = " \t\n\r\f\v";

bool is_ascii_space(char c) {
  return kWhitespace.find(c) != std::string_view::npos;
}
bool is_ascii_alpha(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}

const std::string& string_arg(std::string_view method, const Value& v) {
  if (!v.is_string()) {
    throw EvalError(std::string(method) + "() argument must be str, not " + type_name(v));
  }
  return v.as_string();
}

int64_t count_arg(std::string_view method, const Value& v) {
  if (v.is_undefined() || v.is_none()) return -1;
  if (!v.is_int()) {
    throw EvalError(std::string(method) + "() count must be an integer, not " + type_name(v));
  }
  return v.as_int();
}

// Python's str.title(): a letter is upper case when it follows a non-letter.
std::string title_case(std::string_view s) {
  std::string out(s);
  bool previous_letter = false;
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    c = static_cast<char>(previous_letter ? std::tolower(u) : std::toupper(u));
    previous_letter = is_ascii_alpha(c);
  }
  return out;
}

bool affix_matches(std::string_view method, const std::string& s, const Value& affix, bool prefix) {
  const auto one = [&](const Value& v) {
    const std::string& a = string_arg(method, v);
    if (a.size() > s.size()) return false;
    return prefix ? s.compare(0, a.size(), a) == 0
                  : s.compare(s.size() - a.size(), a.size(), a) == 0;
  };
  if (!affix.is_list()) return one(affix);
  return std::any_of(affix.as_list().begin(), affix.as_list().end(), one);
}

Value split(const std::string& s, const Value& sep, int64_t max_split) {
  List parts;
  if (sep.is_undefined() || sep.is_none()) {
    // Runs of whitespace separate; leading and trailing whitespace yields no empty parts.
    size_t pos = 0;
    while (true) {
      while (pos < s.size() && is_ascii_space(s[pos])) ++pos;
      if (pos >= s.size()) break;
      if (max_split >= 0 && static_cast<int64_t>(parts.size()) == max_split) {
        parts.emplace_back(s.substr(pos));
        break;
      }
      size_t end = pos;
      while (end < s.size() && !is_ascii_space(s[end])) ++end;
      parts.emplace_back(s.substr(pos, end - pos));
      pos = end;
    }
    return parts;
  }
  const std::string& separator = string_arg("split", sep);
  if (separator.empty()) throw EvalError("split(): empty separator");
  size_t pos = 0;
  while (max_split < 0 || static_cast<int64_t>(parts.size()) < max_split) {
    const size_t found = s.find(separator, pos);
    if (found == std::string::npos) break;
    parts.emplace_back(s.substr(pos, found - pos));
    pos = found + separator.size();
  }
  parts.emplace_back(s.substr(pos));
  return parts;
}

// str.format with {}, {0} and {name} fields; format specs and conversions are not supported.
Value format(const std::string& s, const CallArgs& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if ((c == '{' || c == '}') && i + 1 < s.size() && s[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') throw EvalError("format(): single '}' encountered in format string");
    if (c != '{') {
      out += c;
      continue;
    }
    const size_t close = s.find('}', i);
    if (close == std::string::npos)
      throw EvalError("format(): single '{' encountered in format string");
    const std::string field = s.substr(i + 1, close - i - 1);
    if (field.find_first_of(":!.[") != std::string::npos) {
      throw EvalError("format(): field '{" + field + "}' is not supported");
    }
    const Value* value = nullptr;
    if (field.empty() ||
        std::all_of(field.begin(), field.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      const size_t index = field.empty() ? auto_index++ : std::stoul(field);
      if (index >= args.positional.size())
        throw EvalError("format(): index " + std::to_string(index) + " out of range");
      value = &args.positional[index];
    } else {
      for (const auto& [name, v] : args.keyword) {
        if (name == field) value = &v;
      }
      if (!value) throw EvalError("format(): no argument named '" + field + "'");
    }
    out += to_str(*value);
    i = close;
  }
  return out;
}

std::optional<Value> string_method(const std::string& s, std::string_view name,
                                   const CallArgs& args) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const Value chars = bind_args(name, args, {"chars"}, 0)[0];
    return strip_chars(s, chars, name != "rstrip", name != "lstrip");
  }
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
    bind_args(name, args, {}, 0);
    if (name == "upper") return Value(ascii_upper(s));
    if (name == "lower") return Value(ascii_lower(s));
    return Value(name == "title" ? title_case(s) : capitalize(s));
  }
  if (name == "startswith" || name == "endswith") {
    const Value affix = bind_args(name, args, {"affix"}, 1)[0];
    return Value(affix_matches(name, s, affix, name == "startswith"));
  }
  if (name == "split") {
    const auto bound = bind_args(name, args, {"sep", "maxsplit"}, 0);
    return split(s, bound[0], count_arg(name, bound[1]));
  }
  if (name == "replace") {
    const auto bound = bind_args(name, args, {"old", "new", "count"}, 2);
    return Value(replace(s, string_arg(name, bound[0]), string_arg(name, bound[1]),
                         count_arg(name, bound[2])));
  }
  if (name == "find") {
    const Value sub_value = bind_args(name, args, {"sub"}, 1)[0];
    const std::string& sub = string_arg(name, sub_value);
    const size_t at = s.find(sub);
    if (at == std::string::npos) return Value(-1);
    return Value(static_cast<int64_t>(utf8_chars(std::string_view(s).substr(0, at)).size()));
  }
  if (name == "join") {
    std::string out;
    const List items = iterate(bind_args(name, args, {"iterable"}, 1)[0]);
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += s;
      out += string_arg(name, items[i]);
    }
    return Value(std::move(out));
  }
  if (name == "format") return format(s, args);
  return std::nullopt;
}

std::optional<Value> dict_method(const Dict& d, std::string_view name, const CallArgs& args) {
  if (name == "items" || name == "keys" || name == "values") {
    bind_args(name, args, {}, 0);
    List out;
    for (const auto& [key, value] : d.items()) {
      if (name == "items") {
        out.push_back(Value::tuple(List{Value(key), value}));
      } else {
        out.push_back(name == "keys" ? Value(key) : value);
      }
    }
    return Value(std::move(out));
  }
  if (name == "get") {
    const auto bound = bind_args(name, args, {"key", "default"}, 1);
    const Value* found = bound[0].is_string() ? d.find(bound[0].as_string()) : nullptr;
    if (found) return *found;
    return bound[1].is_undefined() ? Value(None{}) : bound[1];
  }
  return std::nullopt;
}

}  // namespace

std::string ascii_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string capitalize(std::string_view s) {
  std::string out = ascii_lower(s);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

std::string replace(std::string_view s, std::string_view old, std::string_view with,
                    int64_t count) {
  std::string out;
  if (old.empty()) {
    // Python inserts the replacement before every character and at the end.
    const auto chars = utf8_chars(s);
    int64_t done = 0;
    for (const std::string_view c : chars) {
      if (count < 0 || done++ < count) out += with;
      out += c;
    }
    if (count < 0 || done < count) out += with;
    return out;
  }
  size_t pos = 0;
  for (int64_t done = 0; count < 0 || done < count; ++done) {
    const size_t found = s.find(old, pos);
    if (found == std::string_view::npos) break;
    out += s.substr(pos, found - pos);
    out += with;
    pos = found + old.size();
  }
  out += s.substr(pos);
  return out;
}

std::string strip_chars(std::string_view s, const Value& chars, bool left, bool right) {
  // Characters, not bytes, so that stripping "é" never splits another character.
  std::vector<std::string_view> set;
  if (chars.is_undefined() || chars.is_none()) {
    set = utf8_chars(kWhitespace);
  } else {
    set = utf8_chars(string_arg("strip", chars));
  }
  const auto in_set = [&](std::string_view c) {
    return std::find(set.begin(), set.end(), c) != set.end();
  };
  const std::vector<std::string_view> text = utf8_chars(s);
  size_t begin = 0;
  size_t end = text.size();
  if (left) {
    while (begin < end && in_set(text[begin])) ++begin;
  }
  if (right) {
    while (end > begin && in_set(text[end - 1])) --end;
  }
  if (begin == end) return "";
  const size_t from = static_cast<size_t>(text[begin].data() - s.data());
  const size_t to = static_cast<size_t>(text[end - 1].data() + text[end - 1].size() - s.data());
  return std::string(s.substr(from, to - from));
}

std::optional<Value> call_method(const Value& object, std::string_view name, const CallArgs& args) {
  if (object.is_string()) return string_method(object.as_string(), name, args);
  if (object.is_dict()) return dict_method(object.as_dict(), name, args);
  return std::nullopt;
}

}  // namespace baton::jinja
