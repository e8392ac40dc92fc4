// Any bytes as the body of a generation request, read as `baton serve` reads OpenAI, vLLM and
// TGI bodies and as `baton batch` reads its lines. A bad body must be refused with an ApiError
// (an HTTP 400) or a baton::Error naming the field, never anything else.

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "tests/fuzz/fuzz_input.h"
#include "tools/request_json.h"
#include "tools/serve/api_error.h"
#include "tools/serve/request_fields.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json body;
  try {
    body = baton::serve::parse_json_body(std::string(baton::fuzz::as_text(data, size)));
  } catch (const baton::serve::ApiError&) {
    return 0;
  }
  try {
    const baton::GenerationParams params =
        baton::serve::read_generation_params(body, 16, baton::cli::RequestLimits{});
    baton::serve::read_stream_choice(body, params);
  } catch (const baton::serve::ApiError&) {
  }
  try {
    baton::cli::request_from_json(body, baton::GenerationParams{});
  } catch (const baton::Error&) {
  }
  return 0;
}
