#pragma once

// A checkpoint's tokenizer as GGUF tokenizer.ggml.* metadata, built the way llama.cpp's
// convert_hf_to_gguf.py builds it, so Baton and llama.cpp tokenize the converted file alike;
// except that a SentencePiece-style tokenizer.json gets merge-rank scores (tokenizer_json_vocab.h)
// where llama.cpp's converter gives every token the same score.
// SentencePiece checkpoints (tokenizer.model, or a SentencePiece-style tokenizer.json) become a
// "llama" vocabulary, byte-level BPE checkpoints (tokenizer.json only: GPT-2, Llama 3, Qwen2,
// StarCoder) a "gpt2" one.

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/formats/gguf/gguf_writer.h"
#include "core/formats/hf_import/llama_config.h"
#include "core/formats/tokenizer/tokenizer.h"

namespace baton::hf {

struct HfVocab {
  std::string model = "llama";  // tokenizer.ggml.model
  std::string pre = "default";  // tokenizer.ggml.pre
  std::vector<std::string> tokens;
  std::vector<float> scores;        // SentencePiece only; empty for BPE
  std::vector<int32_t> types;       // TokenType codes
  std::vector<std::string> merges;  // BPE only: "left right", highest priority first
  // TokenFlag bits per token from the added tokens' lstrip / rstrip / single_word; empty when
  // the checkpoint describes no added token, so that llama.cpp's per-model rules apply.
  std::vector<uint8_t> token_flags;
  int32_t bos = -1, eos = -1, unk = -1, pad = -1;  // -1: none
  bool add_bos = true, add_eos = false;
  bool add_space_prefix = true;  // "llama" only: SentencePiece's dummy "▁" before the text
  std::string chat_template;     // empty: none
};

// The vocabulary of checkpoint `dir`: tokenizer.model when it has one (read_sentencepiece_vocab),
// else tokenizer.json (read_tokenizer_json_vocab). Throws Error(kInvalidModel) when it has
// neither, and the errors of the reader used.
HfVocab read_vocab(const std::filesystem::path& dir, const LlamaConfig& config);

// tokenizer.ggml.model and .pre, the token arrays (scores and merges when there are any), the
// special ids that are set, add_bos_token / add_eos_token, tokenizer.chat_template, and the
// token flag keys (kLstripIdsKey, ...) when the checkpoint describes its added tokens.
void add_vocab_metadata(const HfVocab& vocab, gguf::GgufWriter& writer);

// --- Shared by the readers ---

// llama.cpp's score for added tokens of a SentencePiece vocabulary.
constexpr float kAddedTokenScore = -1000.0f;

// Sets token `id` (ignored when out of range, as llama.cpp does) to `text` of `type`, with
// kAddedTokenScore when the vocabulary has scores.
void set_added_token(HfVocab& v, int64_t id, std::string text, TokenType type);

// Records the lstrip, rstrip and single_word flags of an added-token object (a tokenizer.json
// "added_tokens" entry or a tokenizer_config.json "added_tokens_decoder" value) for token `id`
// (ignored when out of range). Throws Error(kInvalidModel) naming `path` for a flag that is
// not a boolean.
void set_added_token_flags(HfVocab& v, int64_t id, const nlohmann::json& token,
                           const std::filesystem::path& path);

// Added tokens that checkpoints forget to mark special (llama.cpp's does_token_look_special).
bool looks_special(std::string_view token);

// tokenizer_config.json (an empty object when absent).
nlohmann::json read_tokenizer_config(const std::filesystem::path& dir);

// add_bos_token, add_eos_token (when the config sets them) and the chat template: the config's
// chat_template (the one named "default" of a list), else chat_template.jinja.
void read_tokenizer_settings(const nlohmann::json& tokenizer_config,
                             const std::filesystem::path& dir, HfVocab& v);

// config.json's special ids, each where it names a token of the vocabulary.
void apply_configured_ids(const LlamaConfig& config, HfVocab& v);

}  // namespace baton::hf
