#pragma once

// A checkpoint's SentencePiece tokenizer (tokenizer.model) as a "llama" vocabulary, built the
// way llama.cpp's convert_hf_to_gguf.py builds it.

#include <filesystem>

#include "core/formats/hf_import/hf_vocab.h"
#include "core/formats/hf_import/llama_config.h"

namespace baton::hf {

// Reads dir/tokenizer.model, then what transformers adds on top of it: dir/added_tokens.json
// and tokenizer_config.json's added_tokens_decoder (user-defined tokens, or control tokens when
// marked special or spelled like one), add_bos_token, add_eos_token and the chat template. The
// vocabulary has config.vocab_size tokens: ids the SentencePiece model does not fill are
// "[PAD<id>]" of type unused, and pieces past the end are dropped, as llama.cpp does. Special
// ids come from config.json when it names a token, else from the SentencePiece model.
//
// Throws Error(kInvalidModel) when tokenizer.model does not load, and the errors of
// read_json_object.
HfVocab read_sentencepiece_vocab(const std::filesystem::path& dir, const LlamaConfig& config);

}  // namespace baton::hf
