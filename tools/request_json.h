#pragma once

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "baton/llm.h"

namespace baton::cli {

// A request field that is missing, of the wrong type or out of range.
class FieldError : public Error {
 public:
  FieldError(std::string field, const std::string& why)
      : Error(ErrorCategory::kInvalidArgument, "field '" + field + "': " + why),
        field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// Sampling and stopping fields shared by every request format (OpenAI, vLLM), read on top of
// `defaults`: max_tokens, temperature, top_k (-1 or 0: off), top_p, min_p, repetition_penalty,
// presence/frequency_penalty, seed, ignore_eos, n, best_of, use_beam_search, beam_width,
// length_penalty, stop, stop_token_ids. Throws FieldError.
GenerationParams generation_params_from_json(const nlohmann::json& body,
                                             const GenerationParams& defaults);

// Reads a request object ({"prompt": ..., "max_tokens": ..., "temperature": ..., ...}) on top
// of `defaults`. Field names follow the OpenAI and vLLM APIs. Throws Error(kInvalidArgument)
// naming the field when one is missing, of the wrong type or out of range.
Request request_from_json(const nlohmann::json& body, const GenerationParams& defaults);

// The result of one request as a JSON object: text, token ids, finish reason, usage, timings.
nlohmann::json output_to_json(const GenerationOutput& output);

}  // namespace baton::cli
