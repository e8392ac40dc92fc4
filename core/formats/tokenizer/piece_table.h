#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/formats/tokenizer/tokenizer.h"

namespace baton {

// The text of every token, computed once so that detokenizing is a table lookup. How a token's
// spelling becomes text depends on its type: byte tokens give their byte, user-defined tokens
// their spelling as is, control and unknown tokens their spelling only when rendering special
// tokens, unused ones nothing, and normal tokens go through the tokenizer's `decode_normal`.
class PieceTable {
 public:
  PieceTable(const Vocabulary& vocabulary,
             const std::function<std::string(std::string_view)>& decode_normal);

  // Throws Error(kInvalidArgument) naming an id outside the vocabulary.
  const std::string& piece(int32_t id, bool render_special) const;

 private:
  std::vector<std::string> pieces_;
  std::vector<bool> hidden_unless_rendered_;
  std::string empty_;
};

}  // namespace baton
