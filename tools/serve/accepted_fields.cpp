#include "tools/serve/accepted_fields.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "tools/request_json.h"
#include "tools/serve/api_error.h"
#include "tools/serve/output_constraint.h"

namespace baton::serve {
namespace {

struct ObjectFields {
  std::string_view label;  // where the field was, for the error of a field Baton does not know
  bool generation_fields;  // whether cli::generation_fields() are honoured too
  std::vector<std::string_view> own;  // constraint_fields() are added for the generating routes
  std::vector<std::string_view> not_shared;  // generation fields refused here all the same
};

// vLLM's choice among its structured-output implementations: Baton has one, which follows the
// constraint all the same.
constexpr std::string_view kBackendChoice = "guided_decoding_backend";

ObjectFields own_fields(RequestObject kind) {
  switch (kind) {
    case RequestObject::kCompletions:
      return {"POST /v1/completions",
              true,
              {"model", "prompt", "stream", "stream_options", "logprobs", "echo", "user",
               "priority", kBackendChoice},
              {}};
    case RequestObject::kChatCompletions:
      return {"POST /v1/chat/completions",
              true,
              {"model", "messages", "stream", "stream_options", "logprobs", "top_logprobs",
               "max_completion_tokens", "add_generation_prompt", "user", "priority", kBackendChoice,
               "tools", "tool_choice", "parallel_tool_calls"},
              {}};
    case RequestObject::kChatMessage:
      return {"a chat message", false, {"role", "content", "tool_calls", "tool_call_id"}, {}};
    case RequestObject::kStreamOptions:
      return {"stream_options", false, {"include_usage"}, {}};
    case RequestObject::kVllmGenerate:
      return {"vLLM's POST /generate", true, {"prompt", "stream", "priority", kBackendChoice}, {}};
    case RequestObject::kTgiGenerate:
      return {"TGI's generate", false, {"inputs", "parameters", "stream"}, {}};
    case RequestObject::kTgiParameters:
      // TGI's parameters are read with the shared names beside TGI's own; its grammar is
      // TGI's object, not llama.cpp's GBNF, and is read as a constraint field.
      return {"TGI's parameters",
              true,
              {"max_new_tokens", "do_sample", "details", "return_full_text"},
              {}};
    case RequestObject::kLoadLora:
      return {"POST /v1/load_lora_adapter", false, {"lora_name", "lora_path"}, {}};
    case RequestObject::kUnloadLora:
      return {"POST /v1/unload_lora_adapter", false, {"lora_name"}, {}};
  }
  throw std::logic_error("unknown request object");
}

ObjectFields fields_of(RequestObject kind) {
  ObjectFields fields = own_fields(kind);
  const bool openai = kind == RequestObject::kCompletions ||
                      kind == RequestObject::kChatCompletions ||
                      kind == RequestObject::kVllmGenerate;
  if (openai || kind == RequestObject::kTgiParameters) {
    const auto& constraints =
        constraint_fields(openai ? ConstraintApi::kOpenAi : ConstraintApi::kTgi);
    fields.own.insert(fields.own.end(), constraints.begin(), constraints.end());
  }
  return fields;
}

// Fields of the APIs Baton follows (OpenAI, vLLM, TGI) that it does not honour, and why. A value
// equal to `harmless` asks for what Baton does anyway and is accepted.
struct Refusal {
  std::string_view why;
  nlohmann::json harmless;  // null: no value is
};

constexpr std::string_view kLegacyFunctions =
    "is not supported: use tools and tool_choice, which replaced it in OpenAI's API";
constexpr std::string_view kChatOnly = "is taken on POST /v1/chat/completions only";

const std::map<std::string_view, Refusal>& refusals() {
  static const std::map<std::string_view, Refusal> table = {
      {"tools", {kChatOnly, {}}},
      {"tool_choice", {kChatOnly, "none"}},
      {"parallel_tool_calls", {kChatOnly, {}}},
      {"functions", {kLegacyFunctions, {}}},
      {"function_call", {kLegacyFunctions, "none"}},
      {"guided_whitespace_pattern",
       {"is not supported: JSON is written compact, with at most one space between its tokens",
        {}}},
      {"logit_bias", {"is not supported: token biases are not applied", {}}},
      {"allowed_token_ids", {"is not supported: the vocabulary is not restricted", {}}},
      {"bad_words", {"is not supported: the vocabulary is not restricted", {}}},
      {"suffix", {"is not supported: Baton does not fill in the middle", {}}},
      {"modalities", {"is not supported: this server writes text only", {"text"}}},
      {"audio", {"is not supported: this server writes text only", {}}},
      {"prediction", {"is not supported: predicted outputs are not used", {}}},
      {"store", {"is not supported: this server does not store completions", false}},
      {"min_tokens", {"is not supported: there is no minimum output length", 0}},
      {"prompt_logprobs", {"is not supported: the prompt's logprobs are not computed", {}}},
      {"include_stop_str_in_output",
       {"can only be false: the stop string is cut from the output", false}},
      {"skip_special_tokens",
       {"can only be true: special tokens are not written into the text", true}},
      {"truncate_prompt_tokens",
       {"is not supported: a prompt too long for the context is refused, not truncated", {}}},
      {"truncate",
       {"is not supported: a prompt too long for the context is refused, not truncated", {}}},
      {"typical_p", {"is not supported: typical sampling is not implemented", {}}},
      {"watermark", {"is not supported: outputs are not watermarked", false}},
      {"decoder_input_details",
       {"is not supported: the prompt's tokens are not returned with details", false}},
      {"top_n_tokens", {"is not supported: use logprobs on the OpenAI routes", {}}},
      {"adapter_id", {"is not supported: name a LoRA adapter in the OpenAI routes' \"model\"", {}}},
      {"name",
       {"is not supported: the chat template is given each message's role and content only", {}}},
  };
  return table;
}

bool honoured(const ObjectFields& fields, std::string_view name) {
  if (std::ranges::find(fields.own, name) != fields.own.end()) return true;
  const auto& shared = cli::generation_fields();
  return fields.generation_fields && std::ranges::find(shared, name) != shared.end() &&
         std::ranges::find(fields.not_shared, name) == fields.not_shared.end();
}

}  // namespace

void refuse_unhonoured_fields(const nlohmann::json& object, RequestObject kind,
                              const std::string& prefix) {
  const ObjectFields fields = fields_of(kind);
  for (const auto& [name, value] : object.items()) {
    if (value.is_null() || honoured(fields, name)) continue;
    const auto refusal = refusals().find(name);
    if (refusal == refusals().end()) {
      throw bad_field(prefix + name, "is not a field of " + std::string(fields.label) +
                                         " that Baton knows (docs/serving.md lists them)");
    }
    if (!refusal->second.harmless.is_null() && value == refusal->second.harmless) continue;
    throw bad_field(prefix + name, std::string(refusal->second.why));
  }
}

std::vector<std::string_view> honoured_fields(RequestObject kind) {
  const ObjectFields fields = fields_of(kind);
  std::vector<std::string_view> names = fields.own;
  for (const std::string_view name : cli::generation_fields()) {
    if (honoured(fields, name)) names.push_back(name);
  }
  std::ranges::sort(names);
  return names;
}

}  // namespace baton::serve
