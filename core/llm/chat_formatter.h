#pragma once

#include <memory>
#include <string>
#include <vector>

#include "baton/llm.h"
#include "core/gguf/gguf_file.h"
#include "core/tokenizer/tokenizer.h"

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

  ChatPrompt format(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

 private:
  const Tokenizer& tokenizer_;
  std::unique_ptr<ChatTemplate> template_;
  std::string parse_error_;
  std::string bos_text_, eos_text_;
};

}  // namespace baton
