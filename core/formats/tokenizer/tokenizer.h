#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/formats/gguf/gguf_file.h"

namespace baton {

// Token attributes as GGUF's tokenizer.ggml.token_type stores them.
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

// Hugging Face's added-token flags, which say how a special token meets the text beside it.
// Bits of Vocabulary::token_flags.
enum TokenFlag : uint8_t {
  kTokenLstrip = 1,      // absorbs the whitespace before it
  kTokenRstrip = 2,      // absorbs the whitespace after it
  kTokenSingleWord = 4,  // matches only where no letter, digit or '_' touches it
};

// Everything a tokenizer is built from, as read from GGUF tokenizer.ggml.* metadata.
struct Vocabulary {
  std::string model;  // "llama" (SentencePiece BPE), "gpt2" (byte-level BPE), "bert" (WordPiece)
  std::string pre;    // pre-tokenizer name for "gpt2": "gpt-2", "llama-bpe", "qwen2", ...
  std::vector<std::string> tokens;
  std::vector<float> scores;           // may be empty
  std::vector<TokenType> token_types;  // may be empty (all normal)
  std::vector<uint8_t> token_flags;    // TokenFlag bits per token; may be empty (none)
  std::vector<std::string> merges;     // "a b" pairs for BPE, highest priority first
  int32_t bos = -1, eos = -1, unk = -1, pad = -1, sep = -1, cls = -1, mask = -1, eot = -1;
  int32_t eom = -1;                        // end of message (Llama 3.1 "<|eom_id|>")
  std::vector<int32_t> end_of_generation;  // further turn-ending tokens, e.g. "<|im_end|>"
  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = true;  // SentencePiece: prepend "▁" to the text
};

// GGUF keys of the token ids that carry each flag. llama.cpp's GGUFs have none, so where all
// three are absent the flags follow llama.cpp's per-model rules (phi-3's special tokens strip
// on the right, jina-v2's "<mask>" on the left, ...).
inline constexpr std::string_view kLstripIdsKey = "tokenizer.baton.lstrip_ids";
inline constexpr std::string_view kRstripIdsKey = "tokenizer.baton.rstrip_ids";
inline constexpr std::string_view kSingleWordIdsKey = "tokenizer.baton.single_word_ids";
// Each key with its flag, for the reader and the writers.
inline constexpr std::pair<std::string_view, TokenFlag> kTokenFlagKeys[] = {
    {kLstripIdsKey, kTokenLstrip},
    {kRstripIdsKey, kTokenRstrip},
    {kSingleWordIdsKey, kTokenSingleWord}};

// Reads tokenizer.ggml.* and the flag keys above from a GGUF file; throws Error(kInvalidModel)
// naming a bad key and Error(kUnsupported) naming an unknown tokenizer model or pre-tokenizer.
Vocabulary vocabulary_from_gguf(const gguf::GgufFile& file);

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  static std::unique_ptr<Tokenizer> create(Vocabulary vocabulary);

  // add_special: BOS/EOS as the vocabulary's add_bos/add_eos say (WordPiece: CLS and SEP).
  // parse_special: text that spells a control token (e.g. "<s>") becomes that token; otherwise
  // it is tokenized as plain text. User-defined tokens are matched either way, as llama.cpp
  // and Hugging Face do. Malformed UTF-8 never fails: it is tokenized as bytes or as U+FFFD.
  virtual std::vector<int32_t> encode(std::string_view text, bool add_special,
                                      bool parse_special) const = 0;
  // The bytes a token stands for (byte tokens and byte-level BPE decoded; "▁" -> " ").
  // Control and unknown tokens give "" unless render_special; unused ones always give "".
  // Throws Error(kInvalidArgument) for an id outside the vocabulary.
  virtual std::string token_to_piece(int32_t id, bool render_special = false) const = 0;
  // The pieces of `ids`, concatenated as raw bytes. When strips_leading_space(), the first
  // piece that produces text, and the first one after a BOS, loses one leading space.
  std::string decode(std::span<const int32_t> ids, bool render_special = false) const;

  const Vocabulary& vocabulary() const { return vocabulary_; }
  int32_t vocab_size() const { return static_cast<int32_t>(vocabulary_.tokens.size()); }
  int32_t bos() const { return vocabulary_.bos; }
  int32_t eos() const { return vocabulary_.eos; }
  // End of generation: EOS, EOT, or another token that ends a turn.
  bool is_end_of_generation(int32_t id) const;
  // Whether decoding drops the space the encoder put before the first word (SentencePiece with
  // add_space_prefix, WordPiece), so that decode(encode(text)) == text.
  bool strips_leading_space() const;

 protected:
  explicit Tokenizer(Vocabulary vocabulary) : vocabulary_(std::move(vocabulary)) {}
  Vocabulary vocabulary_;
};

// Turns a stream of token ids into text that never ends inside a UTF-8 character: bytes of an
// incomplete character are held back until the character completes. Also drops the leading
// space SentencePiece puts on the first piece of a generation.
class IncrementalDetokenizer {
 public:
  explicit IncrementalDetokenizer(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  // Text that became complete with this token (possibly empty).
  std::string push(int32_t id);
  // Whatever is still held back, with invalid bytes replaced by U+FFFD.
  std::string flush();

 private:
  const Tokenizer& tokenizer_;
  std::string pending_;
  bool at_start_ = true;
};

}  // namespace baton
