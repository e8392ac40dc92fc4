#include "core/formats/tokenizer/piece_table.h"

#include "baton/error.h"
#include "core/formats/tokenizer/vocab_index.h"

namespace baton {

PieceTable::PieceTable(const Vocabulary& vocabulary,
                       const std::function<std::string(std::string_view)>& decode_normal) {
  const size_t count = vocabulary.tokens.size();
  pieces_.resize(count);
  hidden_unless_rendered_.resize(count, false);
  for (size_t id = 0; id < count; ++id) {
    const std::string& text = vocabulary.tokens[id];
    const TokenType type =
        vocabulary.token_types.empty() ? TokenType::kNormal : vocabulary.token_types[id];
    switch (type) {
      case TokenType::kNormal:
        pieces_[id] = decode_normal(text);
        break;
      case TokenType::kByte:
        if (const int byte = parse_byte_token(text); byte >= 0) {
          pieces_[id] = std::string(1, static_cast<char>(byte));
        } else {
          pieces_[id] = decode_normal(text);
        }
        break;
      case TokenType::kUserDefined:
        pieces_[id] = text;
        break;
      case TokenType::kControl:
      case TokenType::kUnknown:
        pieces_[id] = text;
        hidden_unless_rendered_[id] = true;
        break;
      case TokenType::kUnused:
      case TokenType::kUndefined:
        break;
    }
  }
}

const std::string& PieceTable::piece(int32_t id, bool render_special) const {
  if (id < 0 || static_cast<size_t>(id) >= pieces_.size()) {
    throw Error(ErrorCategory::kInvalidArgument, "token id " + std::to_string(id) +
                                                     " is outside the vocabulary of " +
                                                     std::to_string(pieces_.size()));
  }
  return hidden_unless_rendered_[id] && !render_special ? empty_ : pieces_[id];
}

}  // namespace baton
