#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/formats/tokenizer/piece_table.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "core/formats/tokenizer/vocab_index.h"

namespace baton {

// WordPiece (tokenizer.ggml.model "bert"), as BERT's uncased tokenizers do it: text is
// lowercased and stripped of accents, cut at whitespace, punctuation and CJK ideographs, and
// each word is covered greedily by the longest vocabulary pieces. GGUF spells word-initial
// pieces with a leading "▁" and continuation pieces bare (Hugging Face's "##" prefix removed).
// A word that cannot be covered becomes the unknown token.
class WordPieceTokenizer final : public Tokenizer {
 public:
  explicit WordPieceTokenizer(Vocabulary vocabulary);
  WordPieceTokenizer(const WordPieceTokenizer&) = delete;
  WordPieceTokenizer& operator=(const WordPieceTokenizer&) = delete;

  // add_special wraps the ids in CLS (or BOS) and SEP.
  std::vector<int32_t> encode(std::string_view text, bool add_special,
                              bool parse_special) const override;
  std::string token_to_piece(int32_t id, bool render_special) const override;

 private:
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  VocabIndex index_;
  PieceTable pieces_;
  size_t longest_token_ = 0;
};

// BERT's basic tokenization of `text`: normalized words and single-character punctuation.
std::vector<std::string> bert_words(std::string_view text);

}  // namespace baton
