#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "baton/llm.h"
#include "tools/serve/route_context.h"

namespace baton::serve {

// The request body as JSON; malformed JSON or a non-object is ApiError 400.
nlohmann::json parse_json_body(const std::string& body);

// The LoRA adapter a request's "model" field names, or "" for the base model (its name, or no
// field). Any other name gets 404 model_not_found, as vLLM answers.
std::string requested_lora(const nlohmann::json& body, const RouteContext& context);
// The model name a response reports: the request's LoRA adapter, else the served model.
std::string served_model(const GenerationParams& params, const RouteContext& context);

// OpenAI's defaults (temperature 1, top_p 1, no top_k or min_p) under the sampling and stopping
// fields every API shares; a bad field, or one past `limits`, is ApiError 400 naming it. The
// output constraint (grammar and the others) is read_output_constraint's (output_constraint.h).
GenerationParams read_generation_params(const nlohmann::json& body, int32_t default_max_tokens,
                                        const cli::RequestLimits& limits);

// A request's logprobs count (`field`: logprobs or top_logprobs) checked against the limit.
void check_logprobs(const char* field, int64_t count, const cli::RequestLimits& limits);

// Whether body[field] is present and not null.
bool field_given(const nlohmann::json& body, const char* field);

// "stream" and "stream_options.include_usage"; streaming is refused (400) where the first
// completion is only known at the end: beam search and best_of > n.
struct StreamChoice {
  bool stream = false;
  bool include_usage = false;
};
StreamChoice read_stream_choice(const nlohmann::json& body, const GenerationParams& params);

// body[field] as T when present and of T's JSON type, else `fallback`; a wrong type is 400.
bool read_bool(const nlohmann::json& body, const char* field, bool fallback);
int64_t read_int(const nlohmann::json& body, const char* field, int64_t fallback);

// vLLM's "priority" as the engine takes it: vLLM schedules lower values first, the engine
// higher ones, so the value is negated. 0 when absent; a non-zero one is 400 unless the server
// schedules by priority.
int32_t read_priority(const nlohmann::json& body, const RouteContext& context);

// The prompt tokens of one request, checked against the context and the server's limits: a
// prompt that fills the context or is longer than --max-prompt-tokens is 400 on `prompt_field`;
// max_tokens beyond the room left or --max-output-tokens is 400 on max_tokens unless
// `max_tokens_given` is false, in which case it shrinks to fit.
void fit_context(const std::vector<int32_t>& prompt, const RouteContext& context,
                 const char* prompt_field, bool max_tokens_given, GenerationParams& params);

}  // namespace baton::serve
