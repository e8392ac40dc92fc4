#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/formats/tokenizer/regex_splitter.h"

namespace baton {

// Byte-level BPE's first step: cuts text into words that merges never cross, with the regex
// list of a `tokenizer.ggml.pre` variant. The regexes run one after another, each re-cutting
// every piece the previous ones produced (as llama.cpp does).
class PreTokenizer {
 public:
  // Throws Error(kUnsupported) naming an unknown variant. An empty name means "default".
  explicit PreTokenizer(std::string_view variant);

  // The words of `text` (views into it), in order; their concatenation is `text`. `text` must
  // be valid UTF-8.
  std::vector<std::string_view> split(std::string_view text) const;

  // Whether a word that is itself a vocabulary token skips merging (Llama 3's tokenizer.json
  // "ignore_merges").
  bool ignore_merges() const { return ignore_merges_; }

  static bool is_known(std::string_view variant);
  // The variant whose words a tokenizer.json Split pre-tokenizer with `regex` (as the file
  // writes it) cuts, then ByteLevel: "llama-bpe", "qwen2", "gpt-4o"; empty for none.
  static std::string_view variant_of_split(std::string_view regex);

 private:
  std::vector<RegexSplitter> regexes_;
  bool ignore_merges_ = false;
};

}  // namespace baton
