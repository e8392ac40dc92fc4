#pragma once

// A checkpoint's tokenizer.json (the `tokenizers` library's file) as a GGUF vocabulary: a
// byte-level BPE (GPT-2, Llama 3, Qwen2, StarCoder) as a "gpt2" vocabulary, built the way
// llama.cpp's convert_hf_to_gguf.py builds one, and a SentencePiece-style BPE (byte fallback,
// spaces as U+2581: Llama 2, Mistral, TinyLlama) as a "llama" one.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/formats/hf_import/hf_vocab.h"
#include "core/formats/hf_import/llama_config.h"

namespace baton::hf {

// The tokenizer.ggml.pre name of a tokenizer.json pre_tokenizer that Baton implements: "gpt-2"
// (ByteLevel with its own regex), "llama-bpe" and "qwen2" (their Split regex, then ByteLevel
// without one), "starcoder" (single digits, then ByteLevel). Throws Error(kUnsupported) quoting
// the pre-tokenizer otherwise.
std::string pre_tokenizer_name(const nlohmann::json& pre_tokenizer);

// Reads dir/tokenizer.json: model.vocab and model.merges (either "a b" strings or [a, b] pairs),
// added_tokens (control when special or spelled like one, else user-defined), then
// tokenizer_config.json's add_bos_token, add_eos_token and chat template. Without
// add_bos_token, BOS is added when the post-processor's single-sequence template starts with a
// special token, as Llama 3's does. The vocabulary has config.vocab_size tokens, the ids the
// tokenizer leaves empty being "[PAD<id>]" of type unused. BOS and EOS come from config.json,
// else from tokenizer_config.json's bos_token / eos_token.
//
// A SentencePiece-style BPE (byte_fallback) becomes a "llama" vocabulary: <0xXX> tokens are
// byte tokens, model.unk_token the unknown token, each token's score minus the rank of the
// first merge that makes it, and add_space_prefix what the Prepend normalizer or Metaspace
// pre-tokenizer says.
//
// Throws Error(kUnsupported) for a model type other than BPE, a byte-level BPE whose normalizer
// is not none or NFC or whose pre-tokenizer is unknown, a SentencePiece-style BPE with other
// normalizers or pre-tokenizers;
// Error(kInvalidModel) naming the field for a malformed file, a token id outside
// config.vocab_size, or a merge of tokens the vocabulary does not have.
HfVocab read_tokenizer_json_vocab(const std::filesystem::path& dir, const LlamaConfig& config);

}  // namespace baton::hf
