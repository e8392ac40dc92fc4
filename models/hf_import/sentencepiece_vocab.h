#pragma once

// A checkpoint's SentencePiece tokenizer (tokenizer.model) as GGUF tokenizer.ggml.* metadata,
// built the way llama.cpp's convert_hf_to_gguf.py builds a "llama" vocabulary, so Baton and
// llama.cpp tokenize the converted file alike.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/gguf/gguf_writer.h"
#include "models/hf_import/llama_config.h"

namespace baton::hf {

struct SentencePieceVocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;  // TokenType codes: 1 normal, 2 unknown, 3 control, 4 user
                               // defined, 5 unused, 6 byte
  int32_t bos = -1, eos = -1, unk = -1, pad = -1;  // -1: none
  bool add_bos = true, add_eos = false;
  std::string chat_template;  // empty: none
};

// Reads dir/tokenizer.model, then what transformers adds on top of it: dir/added_tokens.json
// and tokenizer_config.json's added_tokens_decoder (user-defined tokens, or control tokens when
// marked special or spelled like one), add_bos_token, add_eos_token and chat_template (the one
// named "default" of a list), else chat_template.jinja. The vocabulary has config.vocab_size
// tokens: ids the SentencePiece model does not fill are "[PAD<id>]" of type unused, and pieces
// past the end are dropped, as llama.cpp does. Special ids come from config.json when it names
// a token, else from the SentencePiece model.
//
// Throws Error(kUnsupported) when the directory has tokenizer.json but no tokenizer.model (only
// SentencePiece vocabularies are converted for now), Error(kInvalidModel) when it has neither or
// tokenizer.model does not load, and the errors of read_json_object.
SentencePieceVocab read_sentencepiece_vocab(const std::filesystem::path& dir,
                                            const LlamaConfig& config);

// tokenizer.ggml.model "llama", .pre "default", the token arrays, the special ids that are set,
// add_bos_token / add_eos_token, and tokenizer.chat_template when there is one.
void add_vocab_metadata(const SentencePieceVocab& vocab, gguf::GgufWriter& writer);

}  // namespace baton::hf
