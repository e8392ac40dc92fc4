// JSON Schemas walked (json_schema_compiler.h): keywords checked, references resolved, const,
// enum and the combinators compiled, and each type handed to json_schema_types.cpp.
#include "core/serving/sampling/json_schema_compiler.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "baton/error.h"
#include "core/serving/sampling/gbnf_text.h"

namespace baton::detail {
namespace {

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

}  // namespace

std::string SchemaCompiler::compile() {
  std::string out = "root ::= " + expression(root_, "", "root", 0) + "\n";
  for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
  return out + std::string(kJsonRules);
}

void SchemaCompiler::fail(const std::string& pointer, const std::string& what) const {
  throw Error(ErrorCategory::kInvalidArgument, "JSON Schema at #" + pointer + ": " + what);
}

std::string SchemaCompiler::rule(const std::string& hint, const std::string& body) {
  if (const auto it = by_body_.find(body); it != by_body_.end()) return it->second;
  std::string name = hint;
  for (int n = 1; names_.contains(name); ++n) name = hint + "-" + std::to_string(n);
  define(name, body);
  by_body_.emplace(body, name);
  return name;
}

void SchemaCompiler::define(const std::string& name, const std::string& body) {
  names_.insert(name);
  rules_.emplace_back(name, body);
}

std::string SchemaCompiler::name_part(const std::string& key) {
  std::string out;
  for (const char c : key) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += plain ? c : '-';
  }
  return out.empty() ? "x" : out.substr(0, 40);
}

std::string SchemaCompiler::expression(const Json& schema, const std::string& pointer,
                                       const std::string& hint, int depth) {
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

std::string SchemaCompiler::reference(const Json& ref, const std::string& pointer, int depth) {
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

std::string SchemaCompiler::enumeration(const Json& schema, const std::string& pointer,
                                        const std::string& hint,
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

bool SchemaCompiler::has_type(const Json& value, const std::string& type) {
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

std::string SchemaCompiler::alternatives(const Json& schemas, const std::string& pointer,
                                         const std::string& hint, int depth) {
  if (!schemas.is_array() || schemas.empty()) fail(pointer, "must be a non-empty array");
  std::string body;
  for (size_t i = 0; i < schemas.size(); ++i) {
    body += (body.empty() ? "" : " | ") + expression(schemas[i], pointer + "/" + std::to_string(i),
                                                     hint + "-" + std::to_string(i), depth + 1);
  }
  return rule(hint, body);
}

std::string SchemaCompiler::all_of(const Json& schema, const std::string& pointer,
                                   const std::string& hint, int depth) {
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

std::string SchemaCompiler::typed(const Json& schema, const std::string& pointer,
                                  const std::string& hint, int depth) {
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

std::string SchemaCompiler::implied_type(const Json& schema, const std::string& pointer) const {
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

}  // namespace baton::detail
