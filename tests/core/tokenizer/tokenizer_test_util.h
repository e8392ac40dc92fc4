#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "core/gguf/gguf_file.h"
#include "core/tokenizer/tokenizer.h"

namespace baton::testing {

inline std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& gguf_path) {
  return Tokenizer::create(vocabulary_from_gguf(gguf::GgufFile::open(gguf_path)));
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A hand-made SentencePiece vocabulary: <unk>, <s>, </s>, the 256 byte tokens, then `pieces`
// as normal tokens (all with score 0).
inline Vocabulary byte_fallback_vocabulary(const std::vector<std::string>& pieces = {}) {
  Vocabulary v;
  v.model = "llama";
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.token_types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  for (int byte = 0; byte < 256; ++byte) {
    char spelled[8];
    std::snprintf(spelled, sizeof(spelled), "<0x%02X>", byte);
    v.tokens.push_back(spelled);
    v.token_types.push_back(TokenType::kByte);
  }
  for (const std::string& piece : pieces) {
    v.tokens.push_back(piece);
    v.token_types.push_back(TokenType::kNormal);
  }
  v.unk = 0;
  v.bos = 1;
  v.eos = 2;
  v.add_bos = true;
  return v;
}

}  // namespace baton::testing
