#pragma once

#include <httplib.h>

#include "tools/serve/route_context.h"

namespace baton::serve {

// The generating endpoints. Each throws ApiError for a request it refuses; the server turns
// that into the error response.

// POST /v1/completions (OpenAI, with vLLM's sampling extras).
void handle_completions(const RouteContext& context, const httplib::Request& request,
                        httplib::Response& response);
// POST /v1/chat/completions.
void handle_chat_completions(const RouteContext& context, const httplib::Request& request,
                             httplib::Response& response);
// POST /generate: vLLM's form ({"prompt": ...}) or TGI's ({"inputs": ...}).
void handle_generate(const RouteContext& context, const httplib::Request& request,
                     httplib::Response& response);
// POST /generate_stream: TGI's streaming form.
void handle_generate_stream(const RouteContext& context, const httplib::Request& request,
                            httplib::Response& response);

// vLLM's runtime LoRA routes (serve --allow-runtime-lora): POST /v1/load_lora_adapter
// {"lora_name", "lora_path"} and POST /v1/unload_lora_adapter {"lora_name"}.
void handle_load_lora_adapter(const RouteContext& context, const httplib::Request& request,
                              httplib::Response& response);
void handle_unload_lora_adapter(const RouteContext& context, const httplib::Request& request,
                                httplib::Response& response);

}  // namespace baton::serve
