#include "tools/bench_serve/openai_protocol.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace baton::bench_serve {
namespace {

nlohmann::json parse_object(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) {
    const std::string_view head = text.substr(0, 80);
    throw std::invalid_argument("not a JSON object: " + std::string(head));
  }
  return j;
}

bool non_empty_string(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() && !it->get_ref<const std::string&>().empty();
}

Usage read_usage(const nlohmann::json& usage) {
  Usage u;
  if (const auto it = usage.find("prompt_tokens"); it != usage.end() && it->is_number_integer()) {
    u.prompt_tokens = it->get<int64_t>();
  }
  if (const auto it = usage.find("completion_tokens");
      it != usage.end() && it->is_number_integer()) {
    u.completion_tokens = it->get<int64_t>();
  }
  return u;
}

std::string error_message(const nlohmann::json& error) {
  if (error.is_string()) return error.get<std::string>();
  if (error.is_object() && non_empty_string(error, "message")) {
    return error["message"].get<std::string>();
  }
  return error.dump();
}

}  // namespace

Api api_for_endpoint(std::string_view endpoint) {
  constexpr std::string_view kChat = "/chat/completions";
  return endpoint.ends_with(kChat) ? Api::kChatCompletions : Api::kCompletions;
}

std::string request_body(Api api, const GenerationSettings& settings, const Prompt& prompt) {
  nlohmann::json body = {{"model", prompt.model.empty() ? settings.model : prompt.model},
                         {"max_tokens", prompt.max_tokens},
                         {"temperature", settings.temperature},
                         {"stream", settings.stream}};
  if (api == Api::kChatCompletions) {
    body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", prompt.text}}});
  } else {
    body["prompt"] = prompt.text;
  }
  if (settings.ignore_eos) body["ignore_eos"] = true;
  if (settings.stream) body["stream_options"] = {{"include_usage", true}};
  return body.dump();
}

StreamChunk parse_stream_chunk(Api api, std::string_view data) {
  const nlohmann::json j = parse_object(data);
  StreamChunk chunk;
  if (const auto it = j.find("error"); it != j.end() && !it->is_null()) {
    chunk.error = error_message(*it);
    return chunk;
  }
  if (const auto it = j.find("usage"); it != j.end() && it->is_object()) {
    chunk.usage = read_usage(*it);
  }
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty()) return chunk;
  const nlohmann::json& choice = choices->front();
  if (!choice.is_object()) return chunk;
  if (api == Api::kCompletions) {
    chunk.has_text = non_empty_string(choice, "text");
  } else if (const auto delta = choice.find("delta"); delta != choice.end()) {
    // Reasoning models stream their thinking as reasoning_content before any content; those are
    // generated tokens too, and the first of them is the first token.
    chunk.has_text = delta->is_object() && (non_empty_string(*delta, "content") ||
                                            non_empty_string(*delta, "reasoning_content"));
  }
  return chunk;
}

Usage parse_response_usage(std::string_view body) {
  const nlohmann::json j = parse_object(body);
  const auto it = j.find("usage");
  return it != j.end() && it->is_object() ? read_usage(*it) : Usage{};
}

std::optional<std::string> first_model_id(std::string_view models_body) {
  const nlohmann::json j = nlohmann::json::parse(models_body, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  const auto data = j.find("data");
  if (data == j.end() || !data->is_array() || data->empty()) return std::nullopt;
  const nlohmann::json& first = data->front();
  if (!first.is_object() || !non_empty_string(first, "id")) return std::nullopt;
  return first["id"].get<std::string>();
}

}  // namespace baton::bench_serve
