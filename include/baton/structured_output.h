#pragma once

// Structured outputs: a JSON Schema, a regular expression or a list of choices, each compiled to
// the GBNF grammar that GenerationParams::grammar takes, so that every kind of constraint runs
// through the one grammar engine. docs/structured-outputs.md lists what each supports. Plain
// types only, so that every layer can include it.

#include <string>
#include <string_view>
#include <vector>

#include "baton/export.h"

namespace baton {

// Values that validate against `schema` (JSON text): the subset of JSON Schema that OpenAI's
// structured outputs and vLLM's guided_json take, with properties in the schema's order. Throws
// Error(kInvalidArgument) naming the keyword and its JSON pointer for what cannot be enforced.
BATON_API std::string json_schema_grammar(std::string_view schema);

// Any JSON object (OpenAI's response_format {"type": "json_object"}).
BATON_API std::string json_object_grammar();

// Texts that `pattern` matches as a whole (vLLM's guided_regex). Throws Error(kInvalidArgument)
// naming a construct a grammar cannot follow (backreferences, lookaround, word boundaries).
BATON_API std::string regex_grammar(std::string_view pattern);

// Exactly one of `choices` (vLLM's guided_choice); at least one is needed.
BATON_API std::string choice_grammar(const std::vector<std::string>& choices);

}  // namespace baton
