// Any bytes as the body of a generation request, read as `baton serve` reads OpenAI, vLLM and
// TGI bodies (their output constraints and tools compiled too) and as `baton batch` reads its
// lines. A bad body must be refused with an ApiError (an HTTP 400) or a baton::Error naming the
// field, never anything else.

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "tests/fuzz/fuzz_input.h"
#include "tools/request_json.h"
#include "tools/serve/api_error.h"
#include "tools/serve/output_constraint.h"
#include "tools/serve/request_fields.h"
#include "tools/serve/tool_calls.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(baton::fuzz::as_text(data, size));
  nlohmann::json body;
  try {
    body = baton::serve::parse_json_body(text);
  } catch (const baton::serve::ApiError&) {
    return 0;
  }
  try {
    const baton::GenerationParams params =
        baton::serve::read_generation_params(body, 16, baton::cli::RequestLimits{});
    baton::serve::read_stream_choice(body, params);
  } catch (const baton::serve::ApiError&) {
  }
  for (const auto api : {baton::serve::ConstraintApi::kOpenAi, baton::serve::ConstraintApi::kTgi}) {
    try {
      baton::GenerationParams params;
      baton::serve::read_output_constraint(body, text, api, "", params);
    } catch (const baton::serve::ApiError&) {
    }
  }
  try {
    const baton::serve::ToolUse tools = baton::serve::read_tool_use(body, text);
    if (tools.active()) baton::serve::tool_call_grammar(tools);
  } catch (const baton::serve::ApiError&) {
  }
  try {
    baton::cli::request_from_json(body, baton::GenerationParams{});
  } catch (const baton::Error&) {
  }
  return 0;
}
