#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "tools/serve/route_context.h"

namespace baton::serve {

// vLLM's demo API: {"prompt": ..., sampling fields, "stream"} -> {"text": [prompt + output]},
// streamed as one JSON object a line with the texts so far.
void vllm_generate(const RouteContext& context, const nlohmann::json& body,
                   const std::string& body_text, httplib::Response& response);
// Text Generation Inference's API: {"inputs": ..., "parameters": {...}} ->
// {"generated_text": ..., "details": ...}; `stream` answers as /generate_stream does.
void tgi_generate(const RouteContext& context, const nlohmann::json& body,
                  const std::string& body_text, bool stream, httplib::Response& response);

}  // namespace baton::serve
