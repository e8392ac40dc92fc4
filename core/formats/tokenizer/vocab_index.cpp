#include "core/formats/tokenizer/vocab_index.h"

#include <algorithm>
#include <cstdio>

#include "baton/error.h"

namespace baton {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

int parse_byte_token(std::string_view text) {
  if (text.size() != 6 || !text.starts_with("<0x") || text.back() != '>') return -1;
  const int high = hex_digit(text[3]);
  const int low = hex_digit(text[4]);
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

VocabIndex::VocabIndex(const Vocabulary& vocabulary)
    : vocabulary_(vocabulary), byte_tokens_(256, -1) {
  const auto& tokens = vocabulary.tokens;
  ids_.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& text = tokens[i];
    // An empty token can never be matched in text, and several may exist as padding.
    if (text.empty()) continue;
    const auto id = static_cast<int32_t>(i);
    const auto [it, inserted] = ids_.emplace(text, id);
    if (!inserted) {
      throw Error(ErrorCategory::kInvalidModel, "duplicate token '" + text + "' with ids " +
                                                    std::to_string(it->second) + " and " +
                                                    std::to_string(id));
    }
    const TokenType token_type = type(id);
    if (token_type == TokenType::kControl || token_type == TokenType::kUnknown ||
        token_type == TokenType::kUserDefined) {
      special_tokens_.push_back(id);
    }
  }
  for (int byte = 0; byte < 256; ++byte) {
    char spelled[8];
    std::snprintf(spelled, sizeof(spelled), "<0x%02X>", byte);
    byte_tokens_[byte] = find(spelled);
  }
  // Stable, so equally long tokens keep vocabulary order and splitting is deterministic.
  std::stable_sort(special_tokens_.begin(), special_tokens_.end(),
                   [&](int32_t a, int32_t b) { return tokens[a].size() > tokens[b].size(); });
}

int32_t VocabIndex::find(std::string_view text) const {
  const auto it = ids_.find(text);
  return it == ids_.end() ? -1 : it->second;
}

TokenType VocabIndex::type(int32_t id) const {
  const auto& types = vocabulary_.token_types;
  return types.empty() ? TokenType::kNormal : types[id];
}

}  // namespace baton
