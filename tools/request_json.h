#pragma once

#include <nlohmann/json.hpp>

#include "baton/llm.h"

namespace baton::cli {

// Reads a request object ({"prompt": ..., "max_tokens": ..., "temperature": ..., ...}) on top
// of `defaults`. Field names follow the OpenAI and vLLM APIs. Throws Error(kInvalidArgument)
// naming the field when one is missing, of the wrong type or out of range.
Request request_from_json(const nlohmann::json& body, const GenerationParams& defaults);

// The result of one request as a JSON object: text, token ids, finish reason, usage, timings.
nlohmann::json output_to_json(const GenerationOutput& output);

}  // namespace baton::cli
