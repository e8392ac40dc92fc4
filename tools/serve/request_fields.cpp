#include "tools/serve/request_fields.h"

#include <cstdint>
#include <utility>

#include "baton/error.h"
#include "core/runtime/bounded_json.h"
#include "tools/request_json.h"
#include "tools/serve/accepted_fields.h"
#include "tools/serve/api_error.h"

namespace baton::serve {

nlohmann::json parse_json_body(const std::string& body) {
  nlohmann::json json;
  try {
    // Not only syntax errors: a number beyond a double's range, or nesting past the bound.
    json = parse_bounded_json<nlohmann::json>(body, "the request body");
  } catch (const Error& e) {
    throw ApiError(400, e.what());
  }
  if (!json.is_object()) throw ApiError(400, "the request body must be a JSON object");
  return json;
}

std::string requested_lora(const nlohmann::json& body, const RouteContext& context) {
  const auto it = body.find("model");
  if (it == body.end() || it->is_null()) return "";
  if (!it->is_string()) throw bad_field("model", "must be a string");
  const std::string name = it->get<std::string>();
  if (name == context.model_name) return "";
  if (context.adapters.contains(name)) return name;
  std::string served = "'" + context.model_name + "'";
  for (const auto& [adapter, path] : context.adapters.list()) served += ", '" + adapter + "'";
  throw ApiError(404, "the model '" + name + "' does not exist; this server serves " + served,
                 "model", "model_not_found");
}

std::string served_model(const GenerationParams& params, const RouteContext& context) {
  return params.lora.empty() ? context.model_name : params.lora;
}

GenerationParams read_generation_params(const nlohmann::json& body, int32_t default_max_tokens,
                                        const cli::RequestLimits& limits) {
  GenerationParams defaults{.max_tokens = default_max_tokens};
  defaults.sampling = SamplingParams{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0};
  GenerationParams params;
  try {
    params = cli::generation_params_from_json(body, defaults, limits);
  } catch (const cli::FieldError& e) {
    throw ApiError(400, e.what(), e.field());
  }
  if (params.max_tokens < 1) throw bad_field("max_tokens", "must be at least 1");
  return params;
}

void check_logprobs(const char* field, int64_t count, const cli::RequestLimits& limits) {
  if (count < 0 || count > limits.max_logprobs) {
    throw bad_field(field, "must be between 0 and " + std::to_string(limits.max_logprobs));
  }
}

bool field_given(const nlohmann::json& body, const char* field) {
  const auto it = body.find(field);
  return it != body.end() && !it->is_null();
}

StreamChoice read_stream_choice(const nlohmann::json& body, const GenerationParams& params) {
  StreamChoice choice{.stream = read_bool(body, "stream", false)};
  if (const auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) throw bad_field("stream_options", "must be an object");
    refuse_unhonoured_fields(*it, RequestObject::kStreamOptions, "stream_options.");
    choice.include_usage = read_bool(*it, "include_usage", false);
  }
  if (choice.stream && (params.use_beam_search || params.best_of > params.n)) {
    throw bad_field("stream", "cannot be combined with beam search or best_of > n");
  }
  return choice;
}

bool read_bool(const nlohmann::json& body, const char* field, bool fallback) {
  const auto it = body.find(field);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) throw bad_field(field, "must be a boolean");
  return it->get<bool>();
}

int64_t read_int(const nlohmann::json& body, const char* field, int64_t fallback) {
  const auto it = body.find(field);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) throw bad_field(field, "must be an integer");
  return it->get<int64_t>();
}

int32_t read_priority(const nlohmann::json& body, const RouteContext& context) {
  const int64_t priority = read_int(body, "priority", 0);
  if (priority == 0) return 0;
  if (!context.priority_scheduling) {
    throw bad_field("priority",
                    "needs the priority scheduling policy (--scheduling-policy "
                    "priority)");
  }
  // Negated, the value must fit too.
  if (priority <= INT32_MIN || priority > INT32_MAX) throw bad_field("priority", "is out of range");
  return static_cast<int32_t>(-priority);
}

void fit_context(const std::vector<int32_t>& prompt, const RouteContext& context,
                 const char* prompt_field, bool max_tokens_given, GenerationParams& params) {
  const auto prompt_tokens = static_cast<int64_t>(prompt.size());
  const int32_t max_prompt = context.limits.max_prompt_tokens;
  if (max_prompt > 0 && prompt_tokens > max_prompt) {
    throw ApiError(400,
                   "the " + std::string(prompt_field) + " has " + std::to_string(prompt_tokens) +
                       " tokens; this server accepts at most " + std::to_string(max_prompt),
                   prompt_field);
  }
  const int32_t max_output = context.limits.max_output_tokens;
  if (max_output > 0 && params.max_tokens > max_output) {
    if (max_tokens_given) {
      throw ApiError(400,
                     "max_tokens asks for " + std::to_string(params.max_tokens) +
                         " tokens; this server generates at most " + std::to_string(max_output),
                     "max_tokens");
    }
    params.max_tokens = max_output;
  }
  const int64_t room = context.context_size - prompt_tokens;
  if (room <= 0) {
    throw ApiError(400,
                   "this model's context holds " + std::to_string(context.context_size) +
                       " tokens, but the " + prompt_field + " has " + std::to_string(prompt_tokens),
                   prompt_field);
  }
  if (params.max_tokens <= room) return;
  if (!max_tokens_given) {
    params.max_tokens = static_cast<int32_t>(room);
    return;
  }
  throw ApiError(400,
                 "this model's context holds " + std::to_string(context.context_size) +
                     " tokens, but " + std::to_string(prompt_tokens) + " are in the " +
                     prompt_field + " and max_tokens asks for " +
                     std::to_string(params.max_tokens) + " more",
                 "max_tokens");
}

}  // namespace baton::serve
