// The values of each JSON Schema type as GBNF (json_schema_compiler.h): strings with their
// formats, patterns and lengths, bounded integers and numbers, objects and arrays.
#include "core/serving/sampling/json_schema_compiler.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/error.h"
#include "core/serving/sampling/gbnf_text.h"
#include "core/serving/sampling/json_number_ranges.h"
#include "core/serving/sampling/regex_grammar.h"

namespace baton::detail {
namespace {

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

constexpr int64_t kMaxCount = 1000;  // items and characters: the grammar's bound on {m,n}
constexpr int64_t kMaxBound = 1000000000000000;  // |minimum|, |maximum|: 10^15

// The largest magnitude json-int-part writes: the bound of a side without one.
constexpr int64_t kUnbounded = 9999999999999999;

}  // namespace

int64_t SchemaCompiler::count(const Json& schema, const char* keyword, const std::string& pointer,
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

std::string SchemaCompiler::repetition(int64_t min, int64_t max) {
  std::string out = "{";
  out += std::to_string(min);
  if (max != min) {
    out += ',';
    if (max >= 0) out += std::to_string(max);
  }
  return out + "}";
}

std::string SchemaCompiler::string_expression(const Json& schema, const std::string& pointer,
                                              const std::string& hint) {
  const bool lengths = schema.contains("minLength") || schema.contains("maxLength");
  const int given = int(schema.contains("format")) + int(schema.contains("pattern")) + int(lengths);
  if (given > 1) {
    fail(pointer, "format, pattern and minLength/maxLength are supported one at a time");
  }
  if (const auto it = schema.find("format"); it != schema.end()) {
    const auto format = it->is_string() ? formats().find(it->get<std::string>()) : formats().end();
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

void SchemaCompiler::add_format(const std::string& name) {
  for (const auto& [rule_name, body] : formats().at(name)) {
    if (!names_.contains(std::string(rule_name))) define(std::string(rule_name), std::string(body));
  }
}

std::pair<std::optional<int64_t>, std::optional<int64_t>> SchemaCompiler::bounds(
    const Json& schema, const std::string& pointer, bool integral) const {
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

std::string SchemaCompiler::integer_range(std::optional<int64_t> low, std::optional<int64_t> high) {
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

std::string SchemaCompiler::integer_expression(const Json& schema, const std::string& pointer,
                                               const std::string& hint) {
  const auto [low, high] = bounds(schema, pointer, true);
  if (!low && !high) return "json-integer";
  return rule(hint, integer_range(low, high));
}

std::string SchemaCompiler::number_expression(const Json& schema, const std::string& pointer,
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

std::string SchemaCompiler::object_expression(const Json& schema, const std::string& pointer,
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

std::string SchemaCompiler::array_expression(const Json& schema, const std::string& pointer,
                                             const std::string& hint, int depth) {
  if (const auto it = schema.find("uniqueItems"); it != schema.end() && *it != false) {
    fail(pointer + "/uniqueItems", "is not supported (a grammar cannot compare items)");
  }
  const int64_t min = count(schema, "minItems", pointer, 0);
  const int64_t max = count(schema, "maxItems", pointer, -1);
  if (max >= 0 && max < min) fail(pointer, "maxItems is below minItems");
  if (const auto it = schema.find("prefixItems"); it != schema.end()) {
    if (!it->is_array() || it->empty()) fail(pointer + "/prefixItems", "must be a non-empty array");
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
  return rule(hint, "\"[\" ws " + item + " " + more + repetition(min - 1, max < 0 ? -1 : max - 1) +
                        " ws \"]\"");
}

}  // namespace baton::detail
