#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "core/formats/tokenizer/piece_table.h"
#include "core/formats/tokenizer/pre_tokenizer.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "core/formats/tokenizer/vocab_index.h"

namespace baton {

// Byte-level BPE (tokenizer.ggml.model "gpt2"): the pre-tokenizer cuts text into words, each
// word's bytes are spelled with GPT-2's byte-to-character map, and adjacent symbols merge in
// the order of tokenizer.ggml.merges (earlier merges first).
class BpeTokenizer final : public Tokenizer {
 public:
  // Throws Error(kUnsupported) naming an unknown pre-tokenizer.
  explicit BpeTokenizer(Vocabulary vocabulary);
  BpeTokenizer(const BpeTokenizer&) = delete;
  BpeTokenizer& operator=(const BpeTokenizer&) = delete;

  std::vector<int32_t> encode(std::string_view text, bool add_special,
                              bool parse_special) const override;
  std::string token_to_piece(int32_t id, bool render_special) const override;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };

  void encode_text(std::string_view text, std::vector<int32_t>& out) const;
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  VocabIndex index_;
  PieceTable pieces_;
  PreTokenizer pre_tokenizer_;
  // "left right" as written in tokenizer.ggml.merges -> rank (0 merges first).
  std::unordered_map<std::string_view, int32_t, Hash, std::equal_to<>> merge_ranks_;
};

}  // namespace baton
