#include "tools/serve/output_constraint.h"

#include <utility>

#include "baton/error.h"
#include "baton/structured_output.h"
#include "core/serving/sampling/grammar.h"
#include "tools/serve/api_error.h"

namespace baton::serve {
namespace {

// Object keys in the order the client wrote them: a schema's properties are generated in it.
using Ordered = nlohmann::ordered_json;

// The grammar `compile` makes, its error reported on `field`.
template <typename Compile>
std::string compiled(const std::string& field, Compile&& compile) {
  try {
    return compile();
  } catch (const Error& e) {
    throw bad_field(field, e.what());
  }
}

std::string schema_grammar(const Ordered& schema, const std::string& field) {
  // vLLM takes guided_json as a schema or as its JSON text.
  if (!schema.is_object() && !schema.is_boolean() && !schema.is_string()) {
    throw bad_field(field, "must be a JSON Schema (an object)");
  }
  const std::string text = schema.is_string() ? schema.get<std::string>() : schema.dump();
  return compiled(field, [&] { return json_schema_grammar(text); });
}

std::string regex_field_grammar(const Ordered& pattern, const std::string& field) {
  if (!pattern.is_string()) throw bad_field(field, "must be a regular expression (a string)");
  return compiled(field, [&] { return regex_grammar(pattern.get<std::string>()); });
}

std::string choice_field_grammar(const Ordered& choices, const std::string& field) {
  if (!choices.is_array() || choices.empty()) {
    throw bad_field(field, "must be a non-empty array of strings");
  }
  std::vector<std::string> texts;
  for (const Ordered& choice : choices) {
    if (!choice.is_string()) throw bad_field(field, "must be a non-empty array of strings");
    texts.push_back(choice.get<std::string>());
  }
  return choice_grammar(texts);
}

std::string gbnf_field(const Ordered& grammar, const std::string& field) {
  if (!grammar.is_string()) throw bad_field(field, "must be a GBNF grammar (a string)");
  return grammar.get<std::string>();
}

void refuse_other_keys(const Ordered& object, std::initializer_list<std::string_view> known,
                       const std::string& field) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      throw bad_field(field + "." + key, "is not a field Baton knows here");
    }
  }
}

// OpenAI's response_format, with llama-server's {"type": "json_object", "schema": ...}.
std::string response_format_grammar(const Ordered& format, const std::string& field) {
  if (!format.is_object()) throw bad_field(field, "must be an object");
  const auto type = format.find("type");
  if (type == format.end() || !type->is_string())
    throw bad_field(field + ".type", "must be a string");
  if (*type == "json_object") {
    refuse_other_keys(format, {"type", "schema"}, field);
    if (format.contains("schema")) return schema_grammar(format["schema"], field + ".schema");
    return json_object_grammar();
  }
  if (*type == "json_schema") {
    refuse_other_keys(format, {"type", "json_schema"}, field);
    const auto spec = format.find("json_schema");
    if (spec == format.end() || !spec->is_object()) {
      throw bad_field(field + ".json_schema", "must be an object holding the schema");
    }
    // Baton always enforces the schema, so strict false asks for no less.
    refuse_other_keys(*spec, {"name", "description", "schema", "strict"}, field + ".json_schema");
    if (!spec->contains("schema")) throw bad_field(field + ".json_schema.schema", "is required");
    return schema_grammar((*spec)["schema"], field + ".json_schema.schema");
  }
  throw bad_field(field + ".type", "must be text, json_object or json_schema");
}

// vLLM's structured_outputs object: one of its constraints.
std::string structured_outputs_grammar(const Ordered& spec, const std::string& field) {
  if (!spec.is_object()) throw bad_field(field, "must be an object");
  refuse_other_keys(spec, {"json", "regex", "choice", "grammar", "json_object"}, field);
  std::vector<std::string> given;
  for (const auto& [key, value] : spec.items()) {
    if (!value.is_null() && !(key == "json_object" && value == false)) given.push_back(key);
  }
  if (given.size() != 1) throw bad_field(field, "must set exactly one constraint");
  const std::string& key = given.front();
  const Ordered& value = spec[key];
  const std::string at = field + "." + key;
  if (key == "json") return schema_grammar(value, at);
  if (key == "regex") return regex_field_grammar(value, at);
  if (key == "choice") return choice_field_grammar(value, at);
  if (key == "grammar") return gbnf_field(value, at);
  if (value != true) throw bad_field(at, "must be true or absent");
  return json_object_grammar();
}

// TGI's grammar parameter.
std::string tgi_grammar(const Ordered& grammar, const std::string& field) {
  if (!grammar.is_object()) throw bad_field(field, "must be an object with type and value");
  refuse_other_keys(grammar, {"type", "value"}, field);
  const auto type = grammar.find("type");
  if (type != grammar.end() && *type != "json" && *type != "regex") {
    throw bad_field(field + ".type", "must be json or regex");
  }
  const auto value = grammar.find("value");
  if (type == grammar.end() || value == grammar.end()) {
    throw bad_field(field, "must be an object with type and value");
  }
  if (*type == "json") return schema_grammar(*value, field + ".value");
  return regex_field_grammar(*value, field + ".value");
}

std::string grammar_of(const std::string& name, const Ordered& value, ConstraintApi api,
                       const std::string& field) {
  if (api == ConstraintApi::kTgi) return tgi_grammar(value, field);
  if (name == "response_format") return response_format_grammar(value, field);
  if (name == "json_schema" || name == "guided_json") return schema_grammar(value, field);
  if (name == "guided_regex") return regex_field_grammar(value, field);
  if (name == "guided_choice") return choice_field_grammar(value, field);
  if (name == "structured_outputs") return structured_outputs_grammar(value, field);
  return gbnf_field(value, field);  // grammar, guided_grammar
}

// response_format {"type": "text"} asks for what Baton does without one.
bool sets_constraint(const std::string& name, const nlohmann::json& value) {
  if (value.is_null()) return false;
  return !(name == "response_format" && value.is_object() && value.size() == 1 &&
           has_value(value, "type", "text"));
}

}  // namespace

const std::vector<std::string_view>& constraint_fields(ConstraintApi api) {
  static const std::vector<std::string_view> openai = {
      "response_format", "json_schema",   "grammar",        "guided_json",
      "guided_regex",    "guided_choice", "guided_grammar", "structured_outputs"};
  static const std::vector<std::string_view> tgi = {"grammar"};
  return api == ConstraintApi::kTgi ? tgi : openai;
}

void read_output_constraint(const nlohmann::json& object, const std::string& body_text,
                            ConstraintApi api, const std::string& prefix,
                            GenerationParams& params) {
  std::vector<std::string> given;
  for (const std::string_view name : constraint_fields(api)) {
    const auto it = object.find(std::string(name));
    if (it != object.end() && sets_constraint(std::string(name), *it)) given.emplace_back(name);
  }
  params.grammar.clear();
  if (given.empty()) return;
  if (given.size() > 1) {
    throw bad_field(prefix + given[1],
                    "cannot be combined with '" + prefix + given[0] + "': give one constraint");
  }
  const std::string& name = given.front();
  const std::string field = prefix + name;
  // The body parsed once more, keeping key order. It parsed before, so it parses now, but a key
  // given twice may keep another of its values this time.
  const Ordered body = Ordered::parse(body_text);
  const std::string holder = prefix.empty() ? "" : prefix.substr(0, prefix.size() - 1);
  const Ordered* value = nullptr;
  try {
    value = &(holder.empty() ? body : body.at(holder)).at(name);
  } catch (const nlohmann::json::exception&) {
    throw bad_field(field, "is given twice in the body, with different values");
  }
  params.grammar = grammar_of(name, *value, api, field);
  try {
    parse_gbnf(params.grammar);
  } catch (const Error& e) {
    throw bad_field(field, e.what());
  }
}

}  // namespace baton::serve
