#include "core/api/chat_formatter.h"

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "core/formats/chat/chat_template.h"

namespace baton {
namespace {

std::string token_text_or_empty(const Vocabulary& vocabulary, int32_t id) {
  return id >= 0 && id < static_cast<int32_t>(vocabulary.tokens.size()) ? vocabulary.tokens[id]
                                                                        : std::string();
}

}  // namespace

ChatFormatter::ChatFormatter(const gguf::GgufFile& file, const Tokenizer& tokenizer,
                             const ChatTemplateLimits& limits)
    : tokenizer_(tokenizer),
      bos_text_(token_text_or_empty(tokenizer.vocabulary(), tokenizer.bos())),
      eos_text_(token_text_or_empty(tokenizer.vocabulary(), tokenizer.eos())) {
  if (limits.max_steps < 1 || limits.max_output_bytes < 1 || limits.max_depth < 1) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the chat template limits (steps, bytes, depth) must be at least 1");
  }
  const std::optional<std::string> source = file.find_string("tokenizer.chat_template");
  renders_tools_ = source && source->find("tools") != std::string::npos;
  try {
    template_ = std::make_unique<ChatTemplate>(
        source ? *source : std::string(default_chat_template()), limits);
  } catch (const Error& e) {
    parse_error_ = e.what();
  }
}

ChatFormatter::~ChatFormatter() = default;

namespace {

nlohmann::ordered_json json_array(const std::string& text, const std::string& what) {
  nlohmann::ordered_json parsed;
  try {
    parsed = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCategory::kInvalidArgument, what + " is not valid JSON: " + e.what());
  }
  if (!parsed.is_array()) throw Error(ErrorCategory::kInvalidArgument, what + " must be an array");
  return parsed;
}

}  // namespace

ChatPrompt ChatFormatter::format(const std::vector<ChatMessage>& messages,
                                 bool add_generation_prompt, const std::string& tools) const {
  if (!template_) {
    throw Error(ErrorCategory::kUnsupported,
                "chat is unavailable: the model's chat template cannot be parsed: " + parse_error_);
  }
  // Insertion order, as transformers renders: a template that serializes a message with tojson
  // writes its keys in the order given.
  nlohmann::ordered_json turns = nlohmann::ordered_json::array();
  for (const ChatMessage& m : messages) {
    nlohmann::ordered_json turn = {{"role", m.role}, {"content", m.content}};
    if (!m.tool_calls.empty())
      turn["tool_calls"] = json_array(m.tool_calls, "a message's tool_calls");
    if (!m.tool_call_id.empty()) turn["tool_call_id"] = m.tool_call_id;
    turns.push_back(std::move(turn));
  }
  nlohmann::ordered_json context = {{"messages", std::move(turns)},
                                    {"add_generation_prompt", add_generation_prompt},
                                    {"bos_token", bos_text_},
                                    {"eos_token", eos_text_}};
  if (!tools.empty()) context["tools"] = json_array(tools, "tools");
  ChatPrompt prompt;
  prompt.text = template_->render_ordered(context);
  // Templates that write the BOS themselves must not get a second one from the tokenizer.
  const bool has_bos = !bos_text_.empty() && prompt.text.starts_with(bos_text_);
  prompt.tokens = tokenizer_.encode(prompt.text, !has_bos, /*parse_special=*/true);
  return prompt;
}

}  // namespace baton
