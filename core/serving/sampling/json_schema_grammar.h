#pragma once

// JSON Schemas compiled to GBNF (grammar.h): the subset OpenAI's structured outputs, vLLM's
// guided_json and llama.cpp's json_schema take. docs/structured-outputs.md lists what is
// supported and how; anything else is refused by name, never ignored, so that what the grammar
// generates always validates against the schema.

#include <string>
#include <string_view>

namespace baton {

// A whole GBNF grammar, rule `root`, for the values `schema` (JSON text) allows. Properties are
// generated in the schema's order. Throws Error(kInvalidArgument) naming the keyword and its
// JSON pointer when the schema is malformed or uses what the grammar cannot enforce.
std::string json_schema_to_gbnf(std::string_view schema);

// Any JSON object (OpenAI's response_format {"type": "json_object"}).
std::string json_object_gbnf();

}  // namespace baton
