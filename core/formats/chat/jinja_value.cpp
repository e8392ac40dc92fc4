#include "core/formats/chat/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

namespace baton::jinja {

Value::Value(List items) : data_(std::make_shared<const List>(std::move(items))) {}
Value Value::tuple(List items) {
  Value v(std::move(items));
  v.tuple_ = true;
  return v;
}

Value::Value(Dict dict) : data_(std::make_shared<const Dict>(std::move(dict))) {}

int64_t Value::as_int() const {
  return is_bool() ? int64_t{as_bool()} : std::get<int64_t>(data_);
}

double Value::as_float() const {
  return is_float() ? std::get<double>(data_) : static_cast<double>(as_int());
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : items_) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Dict::set(std::string key, Value value) {
  for (auto& [k, v] : items_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  items_.emplace_back(std::move(key), std::move(value));
}

bool truthy(const Value& v) {
  struct Visitor {
    bool operator()(const Undefined&) const { return false; }
    bool operator()(const None&) const { return false; }
    bool operator()(bool b) const { return b; }
    bool operator()(int64_t i) const { return i != 0; }
    bool operator()(double d) const { return d != 0.0; }
    bool operator()(const std::string& s) const { return !s.empty(); }
    bool operator()(const std::shared_ptr<const List>& l) const { return !l->empty(); }
    bool operator()(const std::shared_ptr<const Dict>& d) const { return d->size() != 0; }
    bool operator()(const std::shared_ptr<Namespace>&) const { return true; }
    bool operator()(const std::shared_ptr<const Callable>&) const { return true; }
  };
  return std::visit(Visitor{}, v.data());
}

std::string type_name(const Value& v) {
  static constexpr const char* kNames[] = {"undefined", "NoneType", "bool", "int",
                                           "float",     "str",      "list", "dict",
                                           "Namespace", "function"};
  return kNames[v.data().index()];
}

void require_defined(const Value& v) {
  if (v.is_undefined()) throw EvalError(v.as_undefined().reason);
}

std::string format_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // The shortest digits that read back as d, laid out by Python's repr rule: positional when
  // the decimal exponent is in [-4, 16), else scientific with at least two exponent digits.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, end);
  const size_t e_pos = sci.find('e');
  const int exponent = std::atoi(sci.c_str() + e_pos + 1);
  std::string digits;
  bool negative = false;
  for (size_t i = 0; i < e_pos; ++i) {
    if (sci[i] == '-') negative = true;
    if (std::isdigit(static_cast<unsigned char>(sci[i]))) digits += sci[i];
  }
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    const int point = exponent + 1;  // digits before the decimal point
    if (point <= 0) {
      out += "0." + std::string(-point, '0') + digits;
    } else if (point >= static_cast<int>(digits.size())) {
      out += digits + std::string(point - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, point) + "." + digits.substr(point);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exp_buf[16];
  std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out + exp_buf;
}

namespace {

std::string repr_string(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + quote;
}

std::string repr_dict(const Dict& d) {
  std::string out = "{";
  for (size_t i = 0; i < d.items().size(); ++i) {
    if (i) out += ", ";
    out += repr_string(d.items()[i].first) + ": " + repr(d.items()[i].second);
  }
  return out + "}";
}

}  // namespace

std::string to_str(const Value& v) {
  if (v.is_undefined()) return "";
  if (v.is_string()) return v.as_string();
  return repr(v);
}

Footprint footprint(const Value& v, int64_t limit) {
  Footprint total;
  std::vector<std::pair<const Value*, int>> pending = {{&v, 1}};
  while (!pending.empty() && total.bytes <= limit) {
    const auto [value, depth] = pending.back();
    pending.pop_back();
    total.depth = std::max(total.depth, depth);
    if (value->is_string()) {
      total.bytes += static_cast<int64_t>(value->as_string().size());
    } else if (value->is_list()) {
      for (const Value& item : value->as_list()) pending.emplace_back(&item, depth + 1);
    } else if (value->is_dict()) {
      for (const Dict::Item& item : value->as_dict().items()) {
        total.bytes += static_cast<int64_t>(item.first.size());
        pending.emplace_back(&item.second, depth + 1);
      }
    } else {
      ++total.bytes;
    }
  }
  return total;
}

std::string repr(const Value& v) {
  struct Visitor {
    std::string operator()(const Undefined&) const { return ""; }
    std::string operator()(const None&) const { return "None"; }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return format_float(d); }
    std::string operator()(const std::string& s) const { return repr_string(s); }
    std::string operator()(const std::shared_ptr<const List>& l) const {
      std::string out(1, tuple ? '(' : '[');
      for (size_t i = 0; i < l->size(); ++i) {
        if (i) out += ", ";
        out += repr((*l)[i]);
      }
      if (tuple && l->size() == 1) out += ',';
      return out + (tuple ? ')' : ']');
    }
    bool tuple;
    std::string operator()(const std::shared_ptr<const Dict>& d) const { return repr_dict(*d); }
    std::string operator()(const std::shared_ptr<Namespace>& n) const {
      return "<Namespace " + repr_dict(n->attributes) + ">";
    }
    std::string operator()(const std::shared_ptr<const Callable>&) const { return "<function>"; }
  };
  return std::visit(Visitor{v.is_tuple()}, v.data());
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
    return a.as_float() == b.as_float();
  }
  if (a.data().index() != b.data().index()) return false;
  if (a.is_undefined() || a.is_none()) return true;
  if (a.is_string()) return a.as_string() == b.as_string();
  if (a.is_list()) {
    if (a.is_tuple() != b.is_tuple()) return false;
    const List& x = a.as_list();
    const List& y = b.as_list();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!equals(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.is_dict()) {
    const Dict& x = a.as_dict();
    const Dict& y = b.as_dict();
    if (x.size() != y.size()) return false;
    for (const auto& [key, value] : x.items()) {
      const Value* other = y.find(key);
      if (!other || !equals(value, *other)) return false;
    }
    return true;
  }
  if (a.is_namespace()) return &a.as_namespace() == &b.as_namespace();
  return &a.as_callable() == &b.as_callable();
}

int compare(const Value& a, const Value& b) {
  require_defined(a);
  require_defined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
    return a.as_float() < b.as_float() ? -1 : a.as_float() > b.as_float();
  }
  if (a.is_string() && b.is_string()) return a.as_string().compare(b.as_string());
  if (a.is_list() && b.is_list()) {
    const List& x = a.as_list();
    const List& y = b.as_list();
    for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
      if (!equals(x[i], y[i])) return compare(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size();
  }
  throw EvalError("'<' not supported between instances of '" + type_name(a) + "' and '" +
                  type_name(b) + "'");
}

bool contains(const Value& container, const Value& item) {
  if (container.is_undefined()) return false;
  if (container.is_string()) {
    if (!item.is_string()) {
      throw EvalError("'in <string>' requires string as left operand, not " + type_name(item));
    }
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  if (container.is_list()) {
    for (const Value& v : container.as_list()) {
      if (equals(v, item)) return true;
    }
    return false;
  }
  if (container.is_dict()) return item.is_string() && container.as_dict().find(item.as_string());
  throw EvalError("argument of type '" + type_name(container) + "' is not iterable");
}

std::vector<std::string_view> utf8_chars(std::string_view s) {
  std::vector<std::string_view> chars;
  size_t i = 0;
  while (i < s.size()) {
    const auto lead = static_cast<unsigned char>(s[i]);
    size_t n = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    n = std::min(n, s.size() - i);
    chars.push_back(s.substr(i, n));
    i += n;
  }
  return chars;
}

int64_t length(const Value& v) {
  if (v.is_undefined()) return 0;
  if (v.is_string()) return static_cast<int64_t>(utf8_chars(v.as_string()).size());
  if (v.is_list()) return static_cast<int64_t>(v.as_list().size());
  if (v.is_dict()) return static_cast<int64_t>(v.as_dict().size());
  throw EvalError("object of type '" + type_name(v) + "' has no len()");
}

List iterate(const Value& v) {
  if (v.is_undefined()) return {};
  if (v.is_list()) return v.as_list();
  List items;
  if (v.is_dict()) {
    for (const auto& item : v.as_dict().items()) items.emplace_back(item.first);
  } else if (v.is_string()) {
    for (const std::string_view c : utf8_chars(v.as_string())) items.emplace_back(c);
  } else {
    throw EvalError("'" + type_name(v) + "' object is not iterable");
  }
  return items;
}

namespace {

void append_json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    char buf[16];
    switch (s[i]) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    if (u < 0x20) {
      std::snprintf(buf, sizeof(buf), "\\u%04x", u);
      out += buf;
    } else if (u >= 0x80 && ensure_ascii) {
      // Decode one code point and write it as \uXXXX, with a surrogate pair above the BMP.
      const std::string_view c = utf8_chars(s.substr(i))[0];
      uint32_t cp = c.size() == 1 ? u : u & (0xff >> (c.size() + 1));
      for (size_t k = 1; k < c.size(); ++k) cp = (cp << 6) | (c[k] & 0x3f);
      if (cp >= 0x10000) {
        cp -= 0x10000;
        std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", 0xd800 + (cp >> 10),
                      0xdc00 + (cp & 0x3ff));
      } else {
        std::snprintf(buf, sizeof(buf), "\\u%04x", cp);
      }
      out += buf;
      i += c.size() - 1;
    } else {
      out += s[i];
    }
  }
  out += '"';
}

void append_json(std::string& out, const Value& v, const JsonOptions& o, int depth) {
  const std::string item_sep = !o.item_separator.empty() ? o.item_separator
                               : o.indent >= 0           ? ","
                                                         : ", ";
  const auto newline = [&](int level) {
    if (o.indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(o.indent * level), ' ');
  };
  if (v.is_none()) {
    out += "null";
  } else if (v.is_bool()) {
    out += v.as_bool() ? "true" : "false";
  } else if (v.is_int()) {
    out += std::to_string(v.as_int());
  } else if (v.is_float()) {
    const double d = v.as_float();
    out += std::isnan(d)   ? "NaN"
           : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity")
                           : format_float(d);
  } else if (v.is_string()) {
    append_json_string(out, v.as_string(), o.ensure_ascii);
  } else if (v.is_list()) {
    const List& items = v.as_list();
    if (items.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += item_sep;
      newline(depth + 1);
      append_json(out, items[i], o, depth + 1);
    }
    newline(depth);
    out += ']';
  } else if (v.is_dict()) {
    std::vector<const Dict::Item*> items;
    for (const auto& item : v.as_dict().items()) items.push_back(&item);
    if (items.empty()) {
      out += "{}";
      return;
    }
    if (o.sort_keys) {
      std::stable_sort(items.begin(), items.end(), [](const Dict::Item* a, const Dict::Item* b) {
        return a->first < b->first;
      });
    }
    out += '{';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += item_sep;
      newline(depth + 1);
      append_json_string(out, items[i]->first, o.ensure_ascii);
      out += o.key_separator;
      append_json(out, items[i]->second, o, depth + 1);
    }
    newline(depth);
    out += '}';
  } else {
    throw EvalError("Object of type " + type_name(v) + " is not JSON serializable");
  }
}

template <typename Json>
Value convert(const Json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return None{};
    case nlohmann::json::value_t::boolean:
      return j.template get<bool>();
    case nlohmann::json::value_t::number_integer:
      return j.template get<int64_t>();
    case nlohmann::json::value_t::number_unsigned: {
      const auto u = j.template get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(u);
      return static_cast<double>(u);
    }
    case nlohmann::json::value_t::number_float:
      return j.template get<double>();
    case nlohmann::json::value_t::string:
      return j.template get<std::string>();
    case nlohmann::json::value_t::array: {
      List items;
      items.reserve(j.size());
      for (const auto& item : j) items.push_back(convert(item));
      return items;
    }
    case nlohmann::json::value_t::object: {
      Dict dict;
      for (auto it = j.begin(); it != j.end(); ++it) dict.set(it.key(), convert(it.value()));
      return dict;
    }
    default:
      throw EvalError("unsupported JSON value of type " + std::string(j.type_name()));
  }
}

}  // namespace

std::string to_json(const Value& v, const JsonOptions& options) {
  std::string out;
  append_json(out, v, options, 0);
  return out;
}

Value from_json(const nlohmann::json& j) {
  return convert(j);
}
Value from_json(const nlohmann::ordered_json& j) {
  return convert(j);
}

}  // namespace baton::jinja
