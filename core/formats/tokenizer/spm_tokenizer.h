#pragma once

#include "core/formats/tokenizer/piece_table.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "core/formats/tokenizer/vocab_index.h"

namespace baton {

// SentencePiece's space marker "▁" (U+2581) turned back into spaces.
std::string unescape_spaces(std::string_view text);

// SentencePiece-style BPE (tokenizer.ggml.model "llama"): spaces become "▁", a space is
// prefixed to text that starts the input or follows a special token, and adjacent pieces merge
// by the score of the token they form. Characters no token covers fall back to byte tokens
// "<0xXX>", or to the unknown token when the vocabulary has none.
class SpmTokenizer final : public Tokenizer {
 public:
  explicit SpmTokenizer(Vocabulary vocabulary);
  SpmTokenizer(const SpmTokenizer&) = delete;
  SpmTokenizer& operator=(const SpmTokenizer&) = delete;

  std::vector<int32_t> encode(std::string_view text, bool add_special,
                              bool parse_special) const override;
  std::string token_to_piece(int32_t id, bool render_special) const override;

 private:
  void encode_text(std::string_view text, bool prefix_space, std::vector<int32_t>& out) const;
  void emit_symbol(std::string_view symbol, std::vector<int32_t>& out) const;

  VocabIndex index_;
  PieceTable pieces_;
};

}  // namespace baton
