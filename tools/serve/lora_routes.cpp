// vLLM's routes for LoRA adapters loaded and unloaded while the server runs.

#include <string>

#include "baton/error.h"
#include "tools/serve/accepted_fields.h"
#include "tools/serve/api_error.h"
#include "tools/serve/request_fields.h"
#include "tools/serve/routes.h"

namespace baton::serve {
namespace {

std::string required_string(const nlohmann::json& body, const char* field) {
  const auto it = body.find(field);
  if (it == body.end() || !it->is_string() || it->get<std::string>().empty()) {
    throw bad_field(field, "must be a non-empty string");
  }
  return it->get<std::string>();
}

}  // namespace

void handle_load_lora_adapter(const RouteContext& context, const httplib::Request& request,
                              httplib::Response& response) {
  const nlohmann::json body = parse_json_body(request.body);
  refuse_unhonoured_fields(body, RequestObject::kLoadLora);
  const std::string name = required_string(body, "lora_name");
  const std::string path = required_string(body, "lora_path");
  if (name == context.model_name || context.adapters.contains(name)) {
    throw ApiError(400, "the name '" + name + "' is already served", "lora_name");
  }
  try {
    context.llm.load_lora_adapter({.name = name, .path = path});
  } catch (const Error& e) {
    // A missing, unreadable or corrupt adapter is the caller's to fix, like one that does not fit.
    if (e.category() == ErrorCategory::kIo || e.category() == ErrorCategory::kInvalidModel) {
      throw ApiError(400, e.what(), "lora_path");
    }
    throw;
  }
  context.adapters.add(name, path);
  response.set_content("Success: LoRA adapter '" + name + "' added successfully.", "text/plain");
}

void handle_unload_lora_adapter(const RouteContext& context, const httplib::Request& request,
                                httplib::Response& response) {
  const nlohmann::json body = parse_json_body(request.body);
  refuse_unhonoured_fields(body, RequestObject::kUnloadLora);
  const std::string name = required_string(body, "lora_name");
  if (!context.adapters.contains(name)) {
    throw ApiError(404, "the LoRA adapter '" + name + "' is not loaded", "lora_name",
                   "not_found_error");
  }
  // Requests that already asked for it finish with it; new ones get 404 from now on (a request
  // that passed the name check just before gets the engine's error instead).
  context.llm.unload_lora_adapter(name);
  context.adapters.remove(name);
  response.set_content("Success: LoRA adapter '" + name + "' removed successfully.", "text/plain");
}

}  // namespace baton::serve
