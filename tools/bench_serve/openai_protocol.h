#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tools/bench_serve/prompt_dataset.h"

namespace baton::bench_serve {

// The wire format of the OpenAI completions and chat completions APIs, as far as a load client
// needs it. Nothing here does I/O.

enum class Api { kCompletions, kChatCompletions };

// kChatCompletions for a path ending in "/chat/completions", else kCompletions.
Api api_for_endpoint(std::string_view endpoint);

// What every request of a run shares.
struct GenerationSettings {
  std::string model;
  double temperature = 0;
  // Asks the server to keep going past end-of-sequence so that every request generates exactly
  // max_tokens. Not part of OpenAI's API; vLLM, llama.cpp and Baton accept it. When false the
  // field is left out, for servers that reject unknown fields.
  bool ignore_eos = true;
  bool stream = false;
};

// The JSON body of one request. A stream also asks for usage in its last chunk.
std::string request_body(Api api, const GenerationSettings& settings, const Prompt& prompt);

// Token counts from a response's "usage"; -1 where the server left a count out.
struct Usage {
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
};

// One `data:` payload of a streamed response.
struct StreamChunk {
  bool has_text = false;  // it carries non-empty generated text
  std::optional<Usage> usage;
  std::string error;  // the server's message when the chunk reports an error
};

// Throws std::invalid_argument with a short reason when `data` is not a JSON object.
StreamChunk parse_stream_chunk(Api api, std::string_view data);

// The usage of a complete (non-streamed) response. Throws std::invalid_argument when the body is
// not a JSON object.
Usage parse_response_usage(std::string_view body);

// The first model id of a GET /v1/models body, if it lists any.
std::optional<std::string> first_model_id(std::string_view models_body);

}  // namespace baton::bench_serve
