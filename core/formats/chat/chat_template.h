#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "baton/chat_template_limits.h"

namespace baton {

// A model's chat template (GGUF `tokenizer.chat_template`, a Jinja2 template as published on
// Hugging Face) parsed once and rendered per request. It implements the Jinja subset real chat
// templates use, rendered the way transformers' apply_chat_template does: trim_blocks and
// lstrip_blocks on, the loop controls break/continue, raise_exception(msg), strftime_now(fmt) and
// a tojson that writes Python's json.dumps(x, ensure_ascii=False) text.
//
// Parse errors throw Error(ErrorCategory::kInvalidArgument) whose message names line:column and
// what was expected. A template past one of `limits` (too deeply nested to parse; a render that
// runs too many steps, nests macro calls too deeply or builds too much text) throws the same
// error naming the limit. A ChatTemplate is immutable after construction: concurrent render()
// calls are safe.
class ChatTemplate {
 public:
  explicit ChatTemplate(std::string_view source, const ChatTemplateLimits& limits = {});
  ~ChatTemplate();
  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;

  // Renders with the keys of `context` (a JSON object) as global variables, e.g.
  // {"messages": [{"role": "user", "content": "hi"}], "add_generation_prompt": true,
  //  "bos_token": "<s>", "eos_token": "</s>"}.
  // raise_exception("msg") in the template throws Error(kInvalidArgument, "chat template: msg");
  // other runtime errors (an unknown filter, calling a non-callable, using an undefined value,
  // ...) throw Error(kInvalidArgument) naming the template line. Dicts iterate in
  // nlohmann::json's order, which sorts keys; render_ordered keeps the order given.
  std::string render(const nlohmann::json& context) const;
  // As render, with dicts (tool schemas, tool-call arguments) iterated and serialized by tojson in
  // insertion order, as transformers does.
  std::string render_ordered(const nlohmann::ordered_json& context) const;

 private:
  struct Parsed;
  std::unique_ptr<Parsed> parsed_;
};

// The documented fallback for models without a template: ChatML, i.e.
// "<|im_start|>{role}\n{content}<|im_end|>\n" per message, then "<|im_start|>assistant\n" when
// add_generation_prompt is true.
std::string_view default_chat_template();

}  // namespace baton
