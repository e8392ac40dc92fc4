#include "core/serving/sampling/json_schema_grammar.h"

#include <string>

#include "core/runtime/bounded_json.h"
#include "core/serving/sampling/json_schema_compiler.h"

namespace baton {

std::string json_schema_to_gbnf(std::string_view schema) {
  return detail::SchemaCompiler(parse_bounded_json<detail::Json>(schema, "the JSON Schema"))
      .compile();
}

std::string json_object_gbnf() {
  return "root ::= json-object\n" + std::string(detail::kJsonRules);
}

}  // namespace baton
