// The public face of the constraint compilers (baton/structured_output.h).
#include "baton/structured_output.h"

#include "core/serving/sampling/gbnf_text.h"
#include "core/serving/sampling/json_schema_grammar.h"
#include "core/serving/sampling/regex_grammar.h"

namespace baton {

std::string json_schema_grammar(std::string_view schema) {
  return json_schema_to_gbnf(schema);
}

std::string json_object_grammar() {
  return json_object_gbnf();
}

std::string regex_grammar(std::string_view pattern) {
  return "root ::= " + regex_to_gbnf(pattern) + "\n";
}

std::string choice_grammar(const std::vector<std::string>& choices) {
  return gbnf::choice_grammar(choices);
}

}  // namespace baton
