#include "core/serving/sampling/json_schema_grammar.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "baton/error.h"
#include "core/runtime/bounded_json.h"
#include "core/serving/sampling/gbnf_text.h"
#include "core/serving/sampling/regex_grammar.h"

namespace baton {
namespace {

// Schemas keep their properties in the order written: generation follows it.
using Json = nlohmann::ordered_json;

// Values end where their last character is, so that the root's grammar finishes with the value
// and generation stops there. Whitespace is one optional space inside brackets and around
// separators: compact JSON, as OpenAI's structured outputs write it, since small models given
// more freedom spend their tokens on blank lines. JSON allows any \u escape but a lone
// surrogate half, which strict parsers refuse.
constexpr std::string_view kJsonRules = R"(ws ::= " "?
json-value ::= json-object | json-array | json-string | json-number | json-boolean | json-null
json-object ::= "{" ws ( json-member ( ws "," ws json-member )* ws )? "}"
json-member ::= json-string ws ":" ws json-value
json-array ::= "[" ws ( json-value ( ws "," ws json-value )* ws )? "]"
json-string ::= "\"" json-char* "\""
json-char ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" json-hex-code )
json-hex-code ::= [0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2}
json-int-part ::= "0" | [1-9] [0-9]{0,15}
json-integer ::= "-"? json-int-part
json-number ::= "-"? json-int-part ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?
json-boolean ::= "true" | "false"
json-null ::= "null"
)";

// Rules for the string formats supported, added where used. Dates are checked in shape, not
// against the calendar (2023-02-30 passes), as most validators check `format` by default.
const std::map<std::string_view, std::vector<std::pair<std::string_view, std::string_view>>>&
formats() {
  static const std::map<std::string_view,
                        std::vector<std::pair<std::string_view, std::string_view>>>
      table = {
          {"date",
           {{"json-date",
             R"([0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] ))"}}},
          {"time",
           {{"json-time",
             R"(( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{1,6} )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ))"}}},
          {"date-time", {{"json-date-time", R"(json-date "T" json-time)"}}},
          {"uuid",
           {{"json-uuid",
             R"([0-9a-f]{8} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{12})"}}},
      };
  return table;
}

const std::set<std::string_view> kAnnotations = {
    "title",    "description", "default",  "examples",  "$schema", "$id",
    "$comment", "deprecated",  "readOnly", "writeOnly", "$defs",   "definitions"};
const std::set<std::string_view> kObjectKeywords = {"properties", "required",
                                                    "additionalProperties"};
const std::set<std::string_view> kArrayKeywords = {"items", "prefixItems", "minItems", "maxItems",
                                                   "uniqueItems"};
const std::set<std::string_view> kStringKeywords = {"minLength", "maxLength", "pattern", "format"};
const std::set<std::string_view> kNumberKeywords = {"minimum", "maximum", "exclusiveMinimum",
                                                    "exclusiveMaximum"};
const std::set<std::string_view> kCombinators = {"type",  "enum",  "const", "anyOf",
                                                 "oneOf", "allOf", "$ref"};

constexpr int kMaxDepth = 64;  // schemas inside schemas
// Subschemas compiled, counting each time one is compiled again where it is inlined (a type
// list, allOf): bounds the work a small schema written to repeat itself can ask for.
constexpr size_t kMaxVisits = 100000;
constexpr int64_t kMaxCount = 1000;  // items and characters: the grammar's bound on {m,n}
constexpr int64_t kMaxBound = 1000000000000000;  // |minimum|, |maximum|: 10^15

std::string repeated(char c, size_t n) {
  return std::string(n, c);
}

// The decimal forms of the integers in [low, high], 0 <= low <= high, all of one length.
std::string same_length_range(const std::string& low, const std::string& high) {
  if (low.size() == 1) {
    return low == high ? gbnf::literal(low)
                       : gbnf::char_class({{uint32_t(low[0]), uint32_t(high[0])}}, false);
  }
  if (low[0] == high[0]) {
    return gbnf::literal(low.substr(0, 1)) + " " + same_length_range(low.substr(1), high.substr(1));
  }
  const size_t rest = low.size() - 1;
  const bool low_rest_zeros = low.find_first_not_of('0', 1) == std::string::npos;
  const bool high_rest_nines = high.find_first_not_of('9', 1) == std::string::npos;
  std::vector<std::string> parts;
  char first = low[0], last = high[0];
  if (!low_rest_zeros) {
    parts.push_back(gbnf::literal(low.substr(0, 1)) + " (" +
                    same_length_range(low.substr(1), repeated('9', rest)) + ")");
    ++first;
  }
  if (!high_rest_nines) --last;
  if (first <= last) {
    parts.push_back(gbnf::char_class({{uint32_t(first), uint32_t(last)}}, false) + " [0-9]{" +
                    std::to_string(rest) + "}");
  }
  if (!high_rest_nines) {
    parts.push_back(gbnf::literal(high.substr(0, 1)) + " (" +
                    same_length_range(repeated('0', rest), high.substr(1)) + ")");
  }
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : " | ") + part;
  return "(" + out + ")";
}

// The largest magnitude json-int-part writes: the bound of a side without one.
constexpr int64_t kUnbounded = 9999999999999999;

// The decimal forms, without leading zeros, of the integers in [low, top].
std::string non_negative_range(int64_t low, int64_t top) {
  std::string out;
  int64_t band_low = 0, band_high = 9;
  while (band_low <= top) {
    const int64_t from = std::max(low, band_low), to = std::min(top, band_high);
    if (from <= to) {
      out +=
          (out.empty() ? "" : " | ") + same_length_range(std::to_string(from), std::to_string(to));
    }
    band_low = band_high + 1;
    band_high = band_high * 10 + 9;
  }
  return "(" + out + ")";
}

class SchemaCompiler {
 public:
  explicit SchemaCompiler(const Json& root) : root_(root) {}

  std::string compile() {
    std::string out = "root ::= " + expression(root_, "", "root", 0) + "\n";
    for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
    return out + std::string(kJsonRules);
  }

 private:
  [[noreturn]] void fail(const std::string& pointer, const std::string& what) const {
    throw Error(ErrorCategory::kInvalidArgument, "JSON Schema at #" + pointer + ": " + what);
  }

  // A rule with `body`, named after `hint`; rules with the same body are one rule.
  std::string rule(const std::string& hint, const std::string& body) {
    if (const auto it = by_body_.find(body); it != by_body_.end()) return it->second;
    std::string name = hint;
    for (int n = 1; names_.contains(name); ++n) name = hint + "-" + std::to_string(n);
    define(name, body);
    by_body_.emplace(body, name);
    return name;
  }
  void define(const std::string& name, const std::string& body) {
    names_.insert(name);
    rules_.emplace_back(name, body);
  }
  static std::string name_part(const std::string& key) {
    std::string out;
    for (const char c : key) {
      const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      out += plain ? c : '-';
    }
    return out.empty() ? "x" : out.substr(0, 40);
  }

  std::string expression(const Json& schema, const std::string& pointer, const std::string& hint,
                         int depth) {
    if (depth > kMaxDepth) fail(pointer, "schemas nested deeper than " + std::to_string(kMaxDepth));
    if (++visits_ > kMaxVisits) {
      fail(pointer, "the schema is too large to compile (past " + std::to_string(kMaxVisits) +
                        " subschemas, inlined ones counted again)");
    }
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) fail(pointer, "the schema false allows nothing");
      return "json-value";
    }
    if (!schema.is_object()) fail(pointer, "a schema must be an object or a boolean");
    std::vector<std::string> constraints;  // keywords that are not annotations
    for (const auto& [key, value] : schema.items()) {
      if (kAnnotations.contains(key)) continue;
      if (!kCombinators.contains(key) && !kObjectKeywords.contains(key) &&
          !kArrayKeywords.contains(key) && !kStringKeywords.contains(key) &&
          !kNumberKeywords.contains(key)) {
        fail(pointer, "the keyword '" + key + "' is not supported");
      }
      constraints.push_back(key);
    }
    auto only = [&](std::string_view keyword) {
      if (constraints.size() > 1) {
        fail(pointer, "'" + std::string(keyword) +
                          "' is supported only alone (with annotations such as title), not "
                          "beside other keywords");
      }
    };
    if (schema.contains("$ref")) {
      only("$ref");
      return reference(schema["$ref"], pointer + "/$ref", depth);
    }
    if (schema.contains("const") || schema.contains("enum")) {
      return enumeration(schema, pointer, hint, constraints);
    }
    for (const char* keyword : {"anyOf", "oneOf"}) {
      if (!schema.contains(keyword)) continue;
      only(keyword);
      return alternatives(schema[keyword], pointer + "/" + keyword, hint, depth);
    }
    if (schema.contains("allOf")) return all_of(schema, pointer, hint, depth);
    return typed(schema, pointer, hint, depth);
  }

  std::string reference(const Json& ref, const std::string& pointer, int depth) {
    if (!ref.is_string()) fail(pointer, "must be a string");
    const std::string target = ref.get<std::string>();
    if (const auto it = refs_.find(target); it != refs_.end()) return it->second;
    if (target.empty() || target[0] != '#') {
      fail(pointer,
           "only references inside the schema (#/$defs/...) are supported, not '" + target + "'");
    }
    const Json* resolved = nullptr;
    try {
      resolved = &root_.at(Json::json_pointer(target.substr(1)));
    } catch (const nlohmann::json::exception&) {
      fail(pointer, "'" + target + "' does not resolve");
    }
    const size_t slash = target.rfind('/');
    std::string name = "def-" + name_part(target.substr(slash + 1));
    for (int n = 1; names_.contains(name); ++n) {
      name = "def-" + name_part(target.substr(slash + 1)) + "-" + std::to_string(n);
    }
    names_.insert(name);
    refs_.emplace(target, name);  // before its body, which may refer to it again
    const std::string body = expression(*resolved, target.substr(1), name, depth + 1);
    rules_.emplace_back(name, body);
    return name;
  }

  // const or enum: exactly the values given, of those `type` allows when it is beside them.
  std::string enumeration(const Json& schema, const std::string& pointer, const std::string& hint,
                          const std::vector<std::string>& constraints) {
    for (const std::string& key : constraints) {
      if (key != "const" && key != "enum" && key != "type") {
        fail(pointer, "'" + key + "' beside const or enum is not supported (only type is)");
      }
    }
    const bool is_const = schema.contains("const");
    if (is_const && schema.contains("enum")) fail(pointer, "give const or enum, not both");
    const Json values = is_const ? Json::array({schema["const"]}) : schema["enum"];
    const std::string at = pointer + (is_const ? "/const" : "/enum");
    if (!values.is_array() || values.empty()) fail(at, "must be a non-empty array");
    std::vector<std::string> types;
    if (const auto it = schema.find("type"); it != schema.end()) {
      for (const Json& type : it->is_array() ? *it : Json::array({*it})) {
        if (!type.is_string()) fail(pointer + "/type", "must hold type names");
        types.push_back(type.get<std::string>());
      }
    }
    std::string body;
    for (const Json& value : values) {
      if (!types.empty() && std::ranges::none_of(types, [&](const std::string& type) {
            return has_type(value, type);
          })) {
        continue;
      }
      body += (body.empty() ? "" : " | ") + gbnf::literal(value.dump());
    }
    if (body.empty()) fail(at, "no value has the schema's type");
    return rule(hint, body);
  }

  static bool has_type(const Json& value, const std::string& type) {
    if (type == "null") return value.is_null();
    if (type == "boolean") return value.is_boolean();
    if (type == "string") return value.is_string();
    if (type == "object") return value.is_object();
    if (type == "array") return value.is_array();
    if (type == "number") return value.is_number();
    if (type == "integer") {
      return value.is_number_integer() ||
             (value.is_number_float() && value.get<double>() == std::floor(value.get<double>()));
    }
    return false;
  }

  std::string alternatives(const Json& schemas, const std::string& pointer, const std::string& hint,
                           int depth) {
    if (!schemas.is_array() || schemas.empty()) fail(pointer, "must be a non-empty array");
    std::string body;
    for (size_t i = 0; i < schemas.size(); ++i) {
      body +=
          (body.empty() ? "" : " | ") + expression(schemas[i], pointer + "/" + std::to_string(i),
                                                   hint + "-" + std::to_string(i), depth + 1);
    }
    return rule(hint, body);
  }

  // allOf of object schemas: one object with the properties and requirements of all.
  std::string all_of(const Json& schema, const std::string& pointer, const std::string& hint,
                     int depth) {
    const Json& parts = schema["allOf"];
    if (!parts.is_array() || parts.empty()) fail(pointer + "/allOf", "must be a non-empty array");
    Json merged = schema;
    merged.erase("allOf");
    bool alone = true;
    for (const auto& [key, value] : merged.items()) alone = alone && kAnnotations.contains(key);
    if (parts.size() == 1 && alone)
      return expression(parts[0], pointer + "/allOf/0", hint, depth + 1);
    std::vector<const Json*> objects = {&merged};
    for (size_t i = 0; i < parts.size(); ++i) {
      const Json* part = &parts[i];
      std::string at = pointer + "/allOf/" + std::to_string(i);
      for (int hops = 0; part->is_object() && part->contains("$ref"); ++hops) {
        for (const auto& [key, value] : part->items()) {
          if (key != "$ref" && !kAnnotations.contains(key)) {
            fail(at, "allOf parts with $ref beside other keywords are not supported");
          }
        }
        const Json& ref = (*part)["$ref"];
        if (hops > kMaxDepth || !ref.is_string() || ref.get<std::string>().empty() ||
            ref.get<std::string>()[0] != '#') {
          fail(at, "allOf is supported over objects and local references to them");
        }
        at = ref.get<std::string>().substr(1);
        try {
          part = &root_.at(Json::json_pointer(at));
        } catch (const nlohmann::json::exception&) {
          fail(at, "'" + ref.get<std::string>() + "' does not resolve");
        }
      }
      objects.push_back(part);
    }
    Json properties = Json::object(), required = Json::array();
    for (const Json* part : objects) {
      if (!part->is_object()) fail(pointer + "/allOf", "allOf is supported over objects only");
      for (const auto& [key, value] : part->items()) {
        if (kAnnotations.contains(key)) continue;
        if (key == "type" && value == "object") continue;
        if (key == "properties" && value.is_object()) {
          for (const auto& [name, property] : value.items()) {
            if (properties.contains(name)) {
              fail(pointer + "/allOf", "the property '" + name + "' is in two parts of allOf");
            }
            properties[name] = property;
          }
        } else if (key == "required" && value.is_array()) {
          required.insert(required.end(), value.begin(), value.end());
        } else {
          fail(pointer + "/allOf",
               "allOf is supported over objects with properties and required "
               "only, not '" +
                   key + "'");
        }
      }
    }
    Json object = {{"type", "object"}, {"properties", properties}, {"required", required}};
    return object_expression(object, pointer, hint, depth);
  }

  std::string typed(const Json& schema, const std::string& pointer, const std::string& hint,
                    int depth) {
    std::string type;
    if (const auto it = schema.find("type"); it != schema.end()) {
      if (it->is_array()) {
        if (it->empty()) fail(pointer + "/type", "must not be empty");
        std::string body;
        std::set<std::string> seen;
        for (const Json& one : *it) {
          if (!one.is_string()) fail(pointer + "/type", "must hold type names");
          if (!seen.insert(one.get<std::string>()).second) {
            fail(pointer + "/type", "names '" + one.get<std::string>() + "' twice");
          }
          Json narrowed = schema;
          narrowed["type"] = one;
          body += (body.empty() ? "" : " | ") +
                  typed(narrowed, pointer, hint + "-" + one.get<std::string>(), depth);
        }
        return rule(hint, body);
      }
      if (!it->is_string()) fail(pointer + "/type", "must be a type name or a list of them");
      type = it->get<std::string>();
    } else {
      type = implied_type(schema, pointer);
      if (type.empty()) return "json-value";
    }
    if (type == "null") return "json-null";
    if (type == "boolean") return "json-boolean";
    if (type == "string") return string_expression(schema, pointer, hint);
    if (type == "integer") return integer_expression(schema, pointer, hint);
    if (type == "number") return number_expression(schema, pointer, hint);
    if (type == "object") return object_expression(schema, pointer, hint, depth);
    if (type == "array") return array_expression(schema, pointer, hint, depth);
    fail(pointer + "/type", "'" + type + "' is not a JSON Schema type");
  }

  // The type a schema without "type" constrains by its keywords; "" for any value.
  std::string implied_type(const Json& schema, const std::string& pointer) const {
    std::set<std::string> types;
    for (const auto& [key, value] : schema.items()) {
      if (kObjectKeywords.contains(key)) types.insert("object");
      if (kArrayKeywords.contains(key)) types.insert("array");
      if (kStringKeywords.contains(key)) types.insert("string");
      if (kNumberKeywords.contains(key)) types.insert("number");
    }
    if (types.size() > 1) fail(pointer, "give \"type\": its keywords are of several types");
    return types.empty() ? "" : *types.begin();
  }

  int64_t count(const Json& schema, const char* keyword, const std::string& pointer,
                int64_t fallback) const {
    const auto it = schema.find(keyword);
    if (it == schema.end()) return fallback;
    if (!it->is_number_integer() || it->get<int64_t>() < 0) {
      fail(pointer + "/" + keyword, "must be a non-negative integer");
    }
    if (it->get<int64_t>() > kMaxCount) {
      fail(pointer + "/" + keyword, "past " + std::to_string(kMaxCount) + " is not supported");
    }
    return it->get<int64_t>();
  }

  // "{min,max}" for a repetition; max < 0: unbounded.
  static std::string repetition(int64_t min, int64_t max) {
    std::string out = "{";
    out += std::to_string(min);
    if (max != min) {
      out += ',';
      if (max >= 0) out += std::to_string(max);
    }
    return out + "}";
  }

  std::string string_expression(const Json& schema, const std::string& pointer,
                                const std::string& hint) {
    const bool lengths = schema.contains("minLength") || schema.contains("maxLength");
    const int given =
        int(schema.contains("format")) + int(schema.contains("pattern")) + int(lengths);
    if (given > 1) {
      fail(pointer, "format, pattern and minLength/maxLength are supported one at a time");
    }
    if (const auto it = schema.find("format"); it != schema.end()) {
      const auto format =
          it->is_string() ? formats().find(it->get<std::string>()) : formats().end();
      if (format == formats().end()) {
        fail(pointer + "/format",
             "is not supported; the formats supported are date, time, "
             "date-time and uuid");
      }
      if (it->get<std::string>() == "date-time") {
        add_format("date");
        add_format("time");
      }
      add_format(it->get<std::string>());
      return rule(hint, "\"\\\"\" " + std::string(format->second.front().first) + " \"\\\"\"");
    }
    if (const auto it = schema.find("pattern"); it != schema.end()) {
      if (!it->is_string()) fail(pointer + "/pattern", "must be a string");
      std::string expression;
      try {
        expression =
            regex_to_gbnf(it->get<std::string>(), {.inside_json_string = true, .search = true});
      } catch (const Error& e) {
        fail(pointer + "/pattern", e.what());
      }
      return rule(hint, "\"\\\"\" (" + expression + ") \"\\\"\"");
    }
    if (!lengths) return "json-string";
    const int64_t min = count(schema, "minLength", pointer, 0);
    const int64_t max = count(schema, "maxLength", pointer, -1);
    if (max >= 0 && max < min) fail(pointer, "maxLength is below minLength");
    return rule("string-" + std::to_string(min) + "-" + (max < 0 ? "n" : std::to_string(max)),
                "\"\\\"\" json-char" + repetition(min, max) + " \"\\\"\"");
  }

  void add_format(const std::string& name) {
    for (const auto& [rule_name, body] : formats().at(name)) {
      if (!names_.contains(std::string(rule_name)))
        define(std::string(rule_name), std::string(body));
    }
  }

  // The inclusive bounds a number or integer schema sets, as whole numbers: `integral` rounds
  // fractional bounds inwards; otherwise they must be whole.
  std::pair<std::optional<int64_t>, std::optional<int64_t>> bounds(const Json& schema,
                                                                   const std::string& pointer,
                                                                   bool integral) const {
    std::optional<int64_t> low, high;
    auto read = [&](const char* keyword, bool lower, bool exclusive) {
      const auto it = schema.find(keyword);
      if (it == schema.end()) return;
      if (!it->is_number()) fail(pointer + "/" + keyword, "must be a number");
      const double value = it->get<double>();
      if (std::fabs(value) > double(kMaxBound)) {
        fail(pointer + "/" + keyword, "bounds past 10^15 are not supported");
      }
      if (!integral && (value != std::floor(value) || exclusive)) {
        fail(pointer + "/" + keyword,
             "a number's bounds are supported when inclusive and whole (use minimum/maximum)");
      }
      int64_t bound = lower ? int64_t(std::ceil(value)) : int64_t(std::floor(value));
      if (exclusive && double(bound) == value) bound += lower ? 1 : -1;
      auto& slot = lower ? low : high;
      slot = slot ? (lower ? std::max(*slot, bound) : std::min(*slot, bound)) : bound;
    };
    read("minimum", true, false);
    read("exclusiveMinimum", true, true);
    read("maximum", false, false);
    read("exclusiveMaximum", false, true);
    if (low && high && *low > *high) fail(pointer, "no number lies within the bounds");
    return {low, high};
  }

  static std::string integer_range(std::optional<int64_t> low, std::optional<int64_t> high) {
    std::string out;
    if (!high || *high >= 0) {
      out = non_negative_range(std::max<int64_t>(low.value_or(0), 0), high.value_or(kUnbounded));
    }
    if (!low || *low < 0) {
      const int64_t smallest = high && *high < 0 ? -*high : 1;
      if (!out.empty()) out += " | ";
      out += "\"-\" " + non_negative_range(smallest, low ? -*low : kUnbounded);
    }
    return out;
  }

  std::string integer_expression(const Json& schema, const std::string& pointer,
                                 const std::string& hint) {
    const auto [low, high] = bounds(schema, pointer, true);
    if (!low && !high) return "json-integer";
    return rule(hint, integer_range(low, high));
  }

  std::string number_expression(const Json& schema, const std::string& pointer,
                                const std::string& hint) {
    const auto [low, high] = bounds(schema, pointer, false);
    if (!low && !high) return "json-number";
    // A whole number within the bounds, or p.f (f > 0) with both p and p + 1 within them, or
    // -p.f with both -p and -(p + 1) within them.
    const std::string fraction = "\".\" [0-9]{0,15} [1-9]";
    std::string body = integer_range(low, high);
    const int64_t positive_low = std::max<int64_t>(low.value_or(0), 0);
    const int64_t positive_high = high ? *high - 1 : kUnbounded;
    if (positive_high >= positive_low) {
      body += " | " + non_negative_range(positive_low, positive_high) + " " + fraction;
    }
    const int64_t negative_low = std::max<int64_t>(high ? -*high : 0, 0);
    const int64_t negative_high = low ? -*low - 1 : kUnbounded;
    if (negative_high >= negative_low) {
      body += " | \"-\" " + non_negative_range(negative_low, negative_high) + " " + fraction;
    }
    return rule(hint, body);
  }

  std::string object_expression(const Json& schema, const std::string& pointer,
                                const std::string& hint, int depth) {
    const Json no_properties = Json::object();
    const Json& properties = schema.contains("properties") ? schema["properties"] : no_properties;
    if (!properties.is_object()) fail(pointer + "/properties", "must be an object");
    std::vector<std::string> required;
    if (const auto it = schema.find("required"); it != schema.end()) {
      if (!it->is_array()) fail(pointer + "/required", "must be an array of property names");
      for (const Json& name : *it) {
        if (!name.is_string()) fail(pointer + "/required", "must be an array of property names");
        required.push_back(name.get<std::string>());
      }
    }
    const Json extra =
        schema.contains("additionalProperties") ? schema["additionalProperties"] : Json(true);
    if (!extra.is_boolean() && !extra.is_object()) {
      fail(pointer + "/additionalProperties", "must be a boolean or a schema");
    }
    // Members in the schema's order, then the required names it does not describe.
    struct Member {
      std::string name;
      const Json* schema;
      bool required;
    };
    std::vector<Member> members;
    const Json any = true;
    for (const auto& [name, property] : properties.items()) {
      members.push_back({name, &property, std::ranges::find(required, name) != required.end()});
    }
    for (const std::string& name : required) {
      if (properties.contains(name)) continue;
      if (extra == false) {
        fail(pointer + "/required", "'" + name +
                                        "' is required but additionalProperties is false "
                                        "and properties does not describe it");
      }
      members.push_back({name, extra.is_object() ? &extra : &any, true});
    }
    if (members.empty()) {
      if (extra == false) return rule(hint, "\"{\" ws \"}\"");
      if (extra == true) return "json-object";
      const std::string value =
          expression(extra, pointer + "/additionalProperties", hint + "-value", depth + 1);
      const std::string member = rule(hint + "-kv", "json-string ws \":\" ws " + value);
      return rule(hint, "\"{\" ws ( " + member + " ( ws \",\" ws " + member + " )* ws )? \"}\"");
    }
    // Only the properties described are generated, which every additionalProperties allows.
    // first[i]: members i.. with at least one written; rest[i]: members i.., each after a comma.
    const size_t n = members.size();
    std::vector<std::string> first(n + 1), rest(n + 1);
    for (size_t i = n; i-- > 0;) {
      const Member& m = members[i];
      const std::string at = pointer + "/properties/" + m.name;
      const std::string member_hint = hint + "-" + name_part(m.name);
      const std::string value = expression(*m.schema, at, member_hint, depth + 1);
      const std::string member =
          rule(member_hint + "-kv", gbnf::literal(Json(m.name).dump()) + " ws \":\" ws " + value);
      const std::string after = rest[i + 1].empty() ? "" : " " + rest[i + 1];
      if (m.required) {
        rest[i] = rule(hint + "-rest", "ws \",\" ws " + member + after);
        first[i] = rule(hint + "-first", member + after);
      } else {
        rest[i] = rule(hint + "-rest", "( ws \",\" ws " + member + " )?" + after);
        first[i] = rule(hint + "-first",
                        member + after + (first[i + 1].empty() ? "" : " | " + first[i + 1]));
      }
    }
    const bool any_required = std::ranges::any_of(members, &Member::required);
    return rule(hint, any_required ? "\"{\" ws " + first[0] + " ws \"}\""
                                   : "\"{\" ws ( " + first[0] + " ws )? \"}\"");
  }

  std::string array_expression(const Json& schema, const std::string& pointer,
                               const std::string& hint, int depth) {
    if (const auto it = schema.find("uniqueItems"); it != schema.end() && *it != false) {
      fail(pointer + "/uniqueItems", "is not supported (a grammar cannot compare items)");
    }
    const int64_t min = count(schema, "minItems", pointer, 0);
    const int64_t max = count(schema, "maxItems", pointer, -1);
    if (max >= 0 && max < min) fail(pointer, "maxItems is below minItems");
    if (const auto it = schema.find("prefixItems"); it != schema.end()) {
      if (!it->is_array() || it->empty())
        fail(pointer + "/prefixItems", "must be a non-empty array");
      const auto size = static_cast<int64_t>(it->size());
      if (schema.contains("items") && schema["items"] != false) {
        fail(pointer + "/items", "is supported beside prefixItems only as false");
      }
      if (size < min || (max >= 0 && size > max)) {
        fail(pointer, "prefixItems is supported when minItems and maxItems allow all its items");
      }
      std::string body = "\"[\" ws";
      for (size_t i = 0; i < it->size(); ++i) {
        body += (i ? " ws \",\" ws " : " ") +
                expression((*it)[i], pointer + "/prefixItems/" + std::to_string(i),
                           hint + "-" + std::to_string(i), depth + 1);
      }
      return rule(hint, body + " ws \"]\"");
    }
    if (max == 0) return rule(hint, "\"[\" ws \"]\"");
    const Json any = true;
    const Json& items = schema.contains("items") ? schema["items"] : any;
    const std::string item = expression(items, pointer + "/items", hint + "-item", depth + 1);
    if (min == 0 && max < 0 && item == "json-value") return "json-array";
    const std::string more = "( ws \",\" ws " + item + " )";
    if (min == 0) {
      const std::string tail = max < 0 ? "*" : repetition(0, max - 1);
      return rule(hint, "\"[\" ws ( " + item + " " + more + tail + " ws )? \"]\"");
    }
    return rule(hint, "\"[\" ws " + item + " " + more +
                          repetition(min - 1, max < 0 ? -1 : max - 1) + " ws \"]\"");
  }

  const Json& root_;
  std::vector<std::pair<std::string, std::string>> rules_;
  std::set<std::string> names_ = {"root", "ws"};
  std::map<std::string, std::string> by_body_;
  std::map<std::string, std::string> refs_;
  size_t visits_ = 0;
};

}  // namespace

std::string json_schema_to_gbnf(std::string_view schema) {
  return SchemaCompiler(parse_bounded_json<Json>(schema, "the JSON Schema")).compile();
}

std::string json_object_gbnf() {
  return "root ::= json-object\n" + std::string(kJsonRules);
}

}  // namespace baton
