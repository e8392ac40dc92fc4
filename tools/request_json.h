#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

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

// Bounds on what one request may ask for, each a `baton serve` flag (docs/serving.md, "Limits").
struct RequestLimits {
  int32_t max_completions = 64;   // n, best_of and beam_width: each completion is a sequence
  int32_t max_stop_strings = 32;  // stop strings, each matched against every new token
  int32_t max_logprobs = 20;      // alternatives per token (logprobs, top_logprobs)
  int32_t max_prompt_tokens = 0;  // 0: up to the context size
  int32_t max_output_tokens = 0;  // max_tokens; 0: what the context has room for
};

// The names of the fields generation_params_from_json reads.
const std::vector<std::string_view>& generation_fields();

// Sampling and stopping fields shared by every request format (OpenAI, vLLM), read on top of
// `defaults`: max_tokens, temperature, top_k (-1 or 0: off), top_p, min_p, repetition_penalty,
// presence/frequency_penalty, seed, ignore_eos, n, best_of, use_beam_search, beam_width,
// length_penalty, expected_tokens, stop, stop_token_ids, and llama.cpp's grammar (GBNF, checked
// when the engine takes the request). Throws FieldError, also for n, best_of, beam_width or stop
// past `limits`.
GenerationParams generation_params_from_json(const nlohmann::json& body,
                                             const GenerationParams& defaults,
                                             const RequestLimits& limits = {});

// Reads a request object ({"prompt": ..., "max_tokens": ..., "temperature": ..., ...}) on top
// of `defaults`. Field names follow the OpenAI and vLLM APIs. Throws Error(kInvalidArgument)
// naming the field when one is missing, of the wrong type or out of range.
Request request_from_json(const nlohmann::json& body, const GenerationParams& defaults);

// The result of one request as a JSON object: text, token ids, finish reason, usage, timings.
nlohmann::json output_to_json(const GenerationOutput& output);

}  // namespace baton::cli
