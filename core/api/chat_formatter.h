#pragma once

#include <memory>
#include <string>
#include <vector>

#include "baton/llm.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/formats/tokenizer/tokenizer.h"

namespace baton {

class ChatTemplate;

// Renders conversations with the model's tokenizer.chat_template, parsed once at load. A model
// without one gets the ChatML default; a template Baton cannot parse makes chat unavailable
// (every call throws, naming the parse error) without stopping plain completions.
class ChatFormatter {
 public:
  ChatFormatter(const gguf::GgufFile& file, const Tokenizer& tokenizer,
                const ChatTemplateLimits& limits);
  ~ChatFormatter();

  // `tools`: OpenAI's tools array in JSON text, or empty; given to the template as `tools`.
  // Throws Error(kInvalidArgument) when it or a message's tool_calls is not a JSON array.
  ChatPrompt format(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                    const std::string& tools = "") const;
  // Whether the template refers to `tools` (as llama.cpp decides it, by the name's presence).
  bool renders_tools() const { return renders_tools_; }

 private:
  const Tokenizer& tokenizer_;
  std::unique_ptr<ChatTemplate> template_;
  std::string parse_error_;
  std::string bos_text_, eos_text_;
  bool renders_tools_ = false;
};

}  // namespace baton
