#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/formats/tokenizer/tokenizer.h"

namespace baton {

// Lookups every tokenizer needs over a Vocabulary: text to id, token types, byte tokens and the
// tokens split out of text before tokenizing. Holds views into the vocabulary, which must
// outlive it and stay in place.
class VocabIndex {
 public:
  // Throws Error(kInvalidModel) naming a duplicated token text.
  explicit VocabIndex(const Vocabulary& vocabulary);

  // The id of the token spelled `text`, or -1.
  int32_t find(std::string_view text) const;
  TokenType type(int32_t id) const;
  // The "<0xXX>" token of a byte, or -1.
  int32_t byte_token(uint8_t byte) const { return byte_tokens_[byte]; }
  // Control, unknown and user-defined tokens, longest text first (the order llama.cpp splits
  // them out of text in).
  const std::vector<int32_t>& special_tokens() const { return special_tokens_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };

  const Vocabulary& vocabulary_;
  std::unordered_map<std::string_view, int32_t, Hash, std::equal_to<>> ids_;
  std::vector<int32_t> byte_tokens_;
  std::vector<int32_t> special_tokens_;
};

// Parses "<0xXX>" into its byte value; -1 when `text` is not spelled that way.
int parse_byte_token(std::string_view text);

}  // namespace baton
