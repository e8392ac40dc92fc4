// Jinja's filters (`value | name(args)`), with transformers' tojson: json.dumps with
// ensure_ascii=False and the insertion order of dict keys.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "core/formats/chat/jinja_builtins.h"

namespace baton::jinja {

namespace {

// An item's attribute for the attribute= arguments: dict keys, list indices, dotted paths.
Value attribute_of(const Value& item, const Value& attribute) {
  if (attribute.is_int()) {
    const int64_t index = attribute.as_int();
    if (!item.is_list() || index < 0 || index >= static_cast<int64_t>(item.as_list().size())) {
      return Undefined{"no item " + std::to_string(index)};
    }
    return item.as_list()[static_cast<size_t>(index)];
  }
  if (!attribute.is_string())
    throw EvalError("attribute must be a string, got " + type_name(attribute));
  Value current = item;
  std::string_view path = attribute.as_string();
  while (true) {
    const size_t dot = path.find('.');
    const std::string part(path.substr(0, dot));
    const bool numeric = !part.empty() && std::all_of(part.begin(), part.end(),
                                                      [](char c) { return c >= '0' && c <= '9'; });
    const Value* found = nullptr;
    if (current.is_dict()) {
      found = current.as_dict().find(part);
    } else if (current.is_namespace()) {
      found = current.as_namespace().attributes.find(part);
    } else if (current.is_list() && numeric && std::stoul(part) < current.as_list().size()) {
      found = &current.as_list()[std::stoul(part)];
    }
    if (!found)
      return Undefined{"'" + type_name(current) + " object' has no attribute '" + part + "'"};
    const Value next = *found;
    current = next;
    if (dot == std::string_view::npos) return current;
    path.remove_prefix(dot + 1);
  }
}

bool bool_arg(const Value& v, bool fallback) {
  return v.is_undefined() ? fallback : truthy(v);
}

// Sort and unique compare strings case-insensitively unless asked otherwise.
Value sort_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return ascii_lower(v.as_string());
  return v;
}

Value trim(const Value& in, const CallArgs& args) {
  const Value chars = bind_args("trim", args, {"chars"}, 0)[0];
  return strip_chars(to_str(in), chars, true, true);
}

// transformers' tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
Value tojson(const Value& in, const CallArgs& args) {
  const auto bound =
      bind_args("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"}, 0);
  JsonOptions options;
  options.ensure_ascii = bool_arg(bound[0], false);
  if (bound[1].is_int()) options.indent = static_cast<int>(std::max<int64_t>(0, bound[1].as_int()));
  if (bound[2].is_list()) {
    const List& separators = bound[2].as_list();
    if (separators.size() != 2 || !separators[0].is_string() || !separators[1].is_string()) {
      throw EvalError("tojson separators must be two strings");
    }
    options.item_separator = separators[0].as_string();
    options.key_separator = separators[1].as_string();
  }
  options.sort_keys = bool_arg(bound[3], false);
  return to_json(in, options);
}

Value length_filter(const Value& in, const CallArgs& args) {
  bind_args("length", args, {}, 0);
  return length(in);
}

Value upper(const Value& in, const CallArgs& args) {
  bind_args("upper", args, {}, 0);
  return ascii_upper(to_str(in));
}

Value lower(const Value& in, const CallArgs& args) {
  bind_args("lower", args, {}, 0);
  return ascii_lower(to_str(in));
}

Value capitalize_filter(const Value& in, const CallArgs& args) {
  bind_args("capitalize", args, {}, 0);
  return capitalize(to_str(in));
}

// Jinja's title: a word starts after whitespace, '-' or an opening bracket.
Value title(const Value& in, const CallArgs& args) {
  bind_args("title", args, {}, 0);
  std::string s = to_str(in);
  bool word_start = true;
  for (char& c : s) {
    const auto u = static_cast<unsigned char>(c);
    c = static_cast<char>(word_start ? std::toupper(u) : std::tolower(u));
    word_start = std::isspace(u) || std::string_view("-({[<").find(c) != std::string_view::npos;
  }
  return s;
}

Value first(const Value& in, const CallArgs& args) {
  bind_args("first", args, {}, 0);
  const List items = iterate(in);
  return items.empty() ? Value(Undefined{"no first item, sequence was empty"}) : items.front();
}

Value last(const Value& in, const CallArgs& args) {
  bind_args("last", args, {}, 0);
  const List items = iterate(in);
  return items.empty() ? Value(Undefined{"no last item, sequence was empty"}) : items.back();
}

Value join(const Value& in, const CallArgs& args) {
  const auto bound = bind_args("join", args, {"d", "attribute"}, 0);
  const std::string separator = bound[0].is_undefined() ? "" : to_str(bound[0]);
  const bool by_attribute = !bound[1].is_undefined() && !bound[1].is_none();
  std::string out;
  const List items = iterate(in);
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += separator;
    out += to_str(by_attribute ? attribute_of(items[i], bound[1]) : items[i]);
  }
  return out;
}

Value default_filter(const Value& in, const CallArgs& args) {
  const auto bound = bind_args("default", args, {"default_value", "boolean"}, 0);
  const bool use_default = bool_arg(bound[1], false) ? !truthy(in) : in.is_undefined();
  if (!use_default) return in;
  return bound[0].is_undefined() ? Value("") : bound[0];
}

Value string(const Value& in, const CallArgs& args) {
  bind_args("string", args, {}, 0);
  return to_str(in);
}

Value int_filter(const Value& in, const CallArgs& args) {
  const auto bound = bind_args("int", args, {"default", "base"}, 0);
  const Value fallback = bound[0].is_undefined() ? Value(0) : bound[0];
  if (in.is_int()) return in.as_int();
  if (in.is_float())
    return std::isfinite(in.as_float()) ? Value(static_cast<int64_t>(in.as_float())) : fallback;
  if (!in.is_string()) return fallback;
  const std::string s = strip_chars(in.as_string(), Value(), true, true);
  const int base = bound[1].is_int() ? static_cast<int>(bound[1].as_int()) : 10;
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(s.c_str(), &end, base);
  if (!s.empty() && errno == 0 && *end == '\0') return static_cast<int64_t>(parsed);
  // Jinja falls back to reading a float and truncating it.
  const double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && *end == '\0' && std::isfinite(d)) return static_cast<int64_t>(d);
  return fallback;
}

Value float_filter(const Value& in, const CallArgs& args) {
  const Value fallback = bind_args("float", args, {"default"}, 0)[0];
  if (in.is_number()) return in.as_float();
  if (in.is_string()) {
    const std::string s = strip_chars(in.as_string(), Value(), true, true);
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && *end == '\0') return d;
  }
  return fallback.is_undefined() ? Value(0.0) : fallback;
}

Value list(const Value& in, const CallArgs& args) {
  bind_args("list", args, {}, 0);
  return iterate(in);
}

Value items(const Value& in, const CallArgs& args) {
  bind_args("items", args, {}, 0);
  if (in.is_undefined()) return List{};
  if (!in.is_dict()) throw EvalError("items filter needs a dict, got " + type_name(in));
  List out;
  for (const auto& [key, value] : in.as_dict().items()) {
    out.push_back(Value::tuple(List{Value(key), value}));
  }
  return out;
}

Value replace_filter(const Value& in, const CallArgs& args) {
  const auto bound = bind_args("replace", args, {"old", "new", "count"}, 2);
  const int64_t count = bound[2].is_int() ? bound[2].as_int() : -1;
  return replace(to_str(in), to_str(bound[0]), to_str(bound[1]), count);
}

Value safe(const Value& in, const CallArgs& args) {
  bind_args("safe", args, {}, 0);
  return in;
}

Value escape(const Value& in, const CallArgs& args) {
  bind_args("escape", args, {}, 0);
  std::string out;
  for (const char c : to_str(in)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// select/reject/selectattr/rejectattr: keep the items whose (attribute's) test result is `keep`.
Value filter_items(const Value& in, const CallArgs& args, bool by_attribute, bool keep,
                   std::string_view filter) {
  if (!args.keyword.empty()) throw EvalError(std::string(filter) + "() takes no keyword arguments");
  const size_t fixed = by_attribute ? 1 : 0;
  if (args.positional.size() < fixed)
    throw EvalError(std::string(filter) + "() needs an attribute name");
  CallArgs test_args;
  test_args.positional.assign(args.positional.begin() + std::min(args.positional.size(), fixed + 1),
                              args.positional.end());
  List out;
  for (const Value& item : iterate(in)) {
    const Value subject = by_attribute ? attribute_of(item, args.positional[0]) : item;
    const bool passed = args.positional.size() > fixed
                            ? apply_named_test(args.positional[fixed], subject, test_args)
                            : truthy(subject);
    if (passed == keep) out.push_back(item);
  }
  return out;
}

Value select(const Value& in, const CallArgs& a) {
  return filter_items(in, a, false, true, "select");
}
Value reject(const Value& in, const CallArgs& a) {
  return filter_items(in, a, false, false, "reject");
}
Value selectattr(const Value& in, const CallArgs& a) {
  return filter_items(in, a, true, true, "selectattr");
}
Value rejectattr(const Value& in, const CallArgs& a) {
  return filter_items(in, a, true, false, "rejectattr");
}

// map(attribute='x', default=d) or map('filter', args...).
Value map(const Value& in, const CallArgs& args) {
  List out;
  if (args.positional.empty()) {
    const auto bound = bind_args("map", args, {"attribute", "default"}, 1);
    for (const Value& item : iterate(in)) {
      Value v = attribute_of(item, bound[0]);
      out.push_back(v.is_undefined() && !bound[1].is_undefined() ? bound[1] : std::move(v));
    }
    return out;
  }
  if (!args.positional[0].is_string()) throw EvalError("map() needs a filter name or attribute=");
  const std::string& name = args.positional[0].as_string();
  const FilterFn fn = find_filter(name);
  if (!fn) throw EvalError("unknown filter '" + name + "'");
  CallArgs rest{{args.positional.begin() + 1, args.positional.end()}, args.keyword};
  for (const Value& item : iterate(in)) out.push_back(fn(item, rest));
  return out;
}

Value unique(const Value& in, const CallArgs& args) {
  const auto bound = bind_args("unique", args, {"case_sensitive", "attribute"}, 0);
  const bool case_sensitive = bool_arg(bound[0], false);
  List out;
  List seen;
  for (const Value& item : iterate(in)) {
    const Value subject = bound[1].is_undefined() ? item : attribute_of(item, bound[1]);
    const Value key = sort_key(subject, case_sensitive);
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) {
      seen.push_back(key);
      out.push_back(item);
    }
  }
  return out;
}

Value reverse(const Value& in, const CallArgs& args) {
  bind_args("reverse", args, {}, 0);
  if (in.is_string()) {
    const auto chars = utf8_chars(in.as_string());
    std::string out;
    for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += *it;
    return out;
  }
  List items = iterate(in);
  std::reverse(items.begin(), items.end());
  return items;
}

Value sort(const Value& in, const CallArgs& args) {
  const auto bound = bind_args("sort", args, {"reverse", "case_sensitive", "attribute"}, 0);
  const bool descending = bool_arg(bound[0], false);
  const bool case_sensitive = bool_arg(bound[1], false);
  List items = iterate(in);
  const auto key = [&](const Value& item) {
    return sort_key(bound[2].is_undefined() ? item : attribute_of(item, bound[2]), case_sensitive);
  };
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const int order = compare(key(a), key(b));
    return descending ? order > 0 : order < 0;
  });
  return items;
}

Value dictsort(const Value& in, const CallArgs& args) {
  const auto bound = bind_args("dictsort", args, {"case_sensitive", "by", "reverse"}, 0);
  if (!in.is_dict()) throw EvalError("dictsort needs a dict, got " + type_name(in));
  const bool case_sensitive = bool_arg(bound[0], false);
  const size_t by = bound[1].is_string() && bound[1].as_string() == "value" ? 1 : 0;
  const bool descending = bool_arg(bound[2], false);
  List pairs = items(in, {}).as_list();
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& a, const Value& b) {
    const int order = compare(sort_key(a.as_list()[by], case_sensitive),
                              sort_key(b.as_list()[by], case_sensitive));
    return descending ? order > 0 : order < 0;
  });
  return pairs;
}

// Jinja's indent: every line but the first (and the first too with first=true) is indented;
// blank lines only with blank=true.
Value indent(const Value& in, const CallArgs& args) {
  const auto bound = bind_args("indent", args, {"width", "first", "blank"}, 0);
  std::string pad = "    ";
  if (bound[0].is_string()) pad = bound[0].as_string();
  if (bound[0].is_int())
    pad = std::string(static_cast<size_t>(std::max<int64_t>(0, bound[0].as_int())), ' ');
  const bool indent_blank = bool_arg(bound[2], false);
  const std::string s = to_str(in);
  std::vector<std::string_view> lines;
  for (size_t start = 0;;) {
    const size_t end = s.find('\n', start);
    lines.push_back(std::string_view(s).substr(
        start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  std::string out(lines[0]);
  for (size_t i = 1; i < lines.size(); ++i) {
    out += '\n';
    if (indent_blank || !lines[i].empty()) out += pad;
    out += lines[i];
  }
  if (bool_arg(bound[1], false)) out = pad + out;
  return out;
}

Value abs_filter(const Value& in, const CallArgs& args) {
  bind_args("abs", args, {}, 0);
  if (in.is_int()) return std::abs(in.as_int());
  if (in.is_float()) return std::fabs(in.as_float());
  throw EvalError("bad operand type for abs(): '" + type_name(in) + "'");
}

// Jinja's round gives a float; 'common' rounds half to even as Python's round() does.
Value round(const Value& in, const CallArgs& args) {
  const auto bound = bind_args("round", args, {"precision", "method"}, 0);
  if (!in.is_number()) throw EvalError("round needs a number, got " + type_name(in));
  const int64_t precision = bound[0].is_int() ? bound[0].as_int() : 0;
  const std::string method = bound[1].is_string() ? bound[1].as_string() : "common";
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double x = in.as_float() * scale;
  double rounded;
  if (method == "common") {
    rounded = std::nearbyint(x);
  } else if (method == "ceil") {
    rounded = std::ceil(x);
  } else if (method == "floor") {
    rounded = std::floor(x);
  } else {
    throw EvalError("round method must be 'common', 'ceil' or 'floor'");
  }
  return rounded / scale;
}

const std::unordered_map<std::string_view, FilterFn>& filters() {
  static const std::unordered_map<std::string_view, FilterFn> table = {
      {"trim", trim},
      {"tojson", tojson},
      {"length", length_filter},
      {"count", length_filter},
      {"upper", upper},
      {"lower", lower},
      {"capitalize", capitalize_filter},
      {"title", title},
      {"first", first},
      {"last", last},
      {"join", join},
      {"default", default_filter},
      {"d", default_filter},
      {"string", string},
      {"int", int_filter},
      {"float", float_filter},
      {"list", list},
      {"items", items},
      {"replace", replace_filter},
      {"safe", safe},
      {"escape", escape},
      {"e", escape},
      {"forceescape", escape},
      {"select", select},
      {"reject", reject},
      {"selectattr", selectattr},
      {"rejectattr", rejectattr},
      {"map", map},
      {"unique", unique},
      {"reverse", reverse},
      {"sort", sort},
      {"dictsort", dictsort},
      {"indent", indent},
      {"abs", abs_filter},
      {"round", round},
  };
  return table;
}

}  // namespace

FilterFn find_filter(std::string_view name) {
  const auto it = filters().find(name);
  return it == filters().end() ? nullptr : it->second;
}

}  // namespace baton::jinja
