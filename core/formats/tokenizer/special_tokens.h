#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/formats/tokenizer/vocab_index.h"

namespace baton {

// A run of input: either a token already decided (token >= 0) or text still to tokenize.
struct Fragment {
  int32_t token = -1;
  std::string_view text;
};

// Cuts the spellings of special tokens out of `text`, longest token first, as llama.cpp does.
// User-defined tokens are always cut out (Hugging Face treats them as added tokens); control
// and unknown tokens only when parse_special is set, otherwise they stay plain text. A token
// flagged lstrip or rstrip takes the ASCII whitespace on that side with it, and a single-word
// token is left in text where it touches a letter, digit or '_'.
std::vector<Fragment> split_special_tokens(std::string_view text, const Vocabulary& vocabulary,
                                           const VocabIndex& index, bool parse_special);

}  // namespace baton
