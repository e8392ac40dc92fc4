#pragma once

// What a request asks the output to follow, from the fields each API names it with, compiled to
// the GBNF grammar the engine takes (baton/structured_output.h): OpenAI's response_format,
// vLLM's guided_* and structured_outputs, llama.cpp's grammar and json_schema, TGI's grammar.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "baton/generation.h"

namespace baton::serve {

enum class ConstraintApi {
  kOpenAi,  // the OpenAI routes and vLLM's /generate, with vLLM's and llama.cpp's extensions
  kTgi,     // TGI's parameters: grammar is {"type": "json" | "regex", "value": ...}
};

// The field names read_output_constraint reads for `api`.
const std::vector<std::string_view>& constraint_fields(ConstraintApi api);

// Sets params.grammar from the one constraint `object` (the request body, or TGI's parameters)
// sets, if any; a JSON Schema is read from `body_text` again, keeping its properties' order,
// which `object` lost. `prefix` names where `object` is ("parameters." or ""). Throws ApiError
// 400 naming the field for a malformed or unsupported constraint, and for two constraints at
// once.
void read_output_constraint(const nlohmann::json& object, const std::string& body_text,
                            ConstraintApi api, const std::string& prefix, GenerationParams& params);

}  // namespace baton::serve
