#pragma once

// No request field is silently ignored: each kind of request object lists the fields Baton
// honours, and a body holding any other field is answered 400 naming the field and saying why
// (docs/serving.md, "Request fields"). A field whose value is null counts as absent, as in
// OpenAI's API, and so does a switch set to the behaviour Baton always has
// ("include_stop_str_in_output": false).

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace baton::serve {

enum class RequestObject {
  kCompletions,      // POST /v1/completions
  kChatCompletions,  // POST /v1/chat/completions
  kChatMessage,      // one of its "messages"
  kStreamOptions,    // "stream_options" of either
  kVllmGenerate,     // POST /generate with "prompt"
  kTgiGenerate,      // POST /generate with "inputs", and /generate_stream
  kTgiParameters,    // their "parameters"
  kLoadLora,         // POST /v1/load_lora_adapter
  kUnloadLora,       // POST /v1/unload_lora_adapter
};

// Throws ApiError 400 for the first field of `object` that Baton does not honour there; the
// error's param is `prefix` + the field ("messages[2].name").
void refuse_unhonoured_fields(const nlohmann::json& object, RequestObject kind,
                              const std::string& prefix = "");

// The fields honoured in `kind`, sorted.
std::vector<std::string_view> honoured_fields(RequestObject kind);

}  // namespace baton::serve
