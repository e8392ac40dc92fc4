#include <algorithm>
#include <array>

#include "baton/error.h"
#include "core/formats/tokenizer/pre_tokenizer.h"
#include "core/formats/tokenizer/token_flags.h"
#include "core/formats/tokenizer/tokenizer.h"

namespace baton {

namespace {

constexpr std::string_view kPrefix = "tokenizer.ggml.";

std::string key(std::string_view name) {
  return std::string(kPrefix) + std::string(name);
}

// Llama 3 family pre-tokenizers, whose models expect a BOS even when add_bos_token is absent.
bool adds_bos_by_default(std::string_view pre) {
  constexpr std::array<std::string_view, 5> kNames = {"llama-bpe", "llama3", "llama-v3", "falcon3",
                                                      "pixtral"};
  return std::find(kNames.begin(), kNames.end(), pre) != kNames.end();
}

// llama.cpp's defaults for GGUFs that leave the special ids or flags out.
void apply_model_defaults(Vocabulary& v) {
  if (v.model == "llama") {
    v.bos = 1;
    v.eos = 2;
    v.unk = 0;
    v.add_bos = true;
    v.add_space_prefix = true;
  } else if (v.model == "bert") {
    v.cls = v.bos = 101;
    v.unk = 100;
    v.sep = 102;
    v.pad = 0;
    v.mask = 103;
    v.add_bos = true;
    v.add_space_prefix = false;
  } else if (v.model == "gpt2") {
    v.add_bos = adds_bos_by_default(v.pre);
    v.add_space_prefix = false;
  } else {
    throw Error(ErrorCategory::kUnsupported,
                "unknown tokenizer model '" + v.model + "' (" + key("model") + ")");
  }
}

std::vector<TokenType> read_token_types(const gguf::GgufFile& file, size_t count) {
  if (!file.contains(key("token_type"))) return {};
  const std::vector<int64_t> raw = file.get_int_array(key("token_type"));
  if (raw.size() != count) {
    throw Error(ErrorCategory::kInvalidModel, key("token_type") + " has " +
                                                  std::to_string(raw.size()) + " entries for " +
                                                  std::to_string(count) + " tokens");
  }
  std::vector<TokenType> types(count);
  for (size_t i = 0; i < count; ++i) {
    const bool known = raw[i] >= 0 && raw[i] <= static_cast<int64_t>(TokenType::kByte);
    types[i] = known ? static_cast<TokenType>(raw[i]) : TokenType::kUndefined;
  }
  return types;
}

// An id key overrides the default only when it names a token: converters write -1 as
// 0xFFFFFFFF for "none", and llama.cpp ignores ids past the vocabulary the same way.
void read_id(const gguf::GgufFile& file, std::string_view name, size_t count, int32_t& id) {
  const std::optional<int64_t> value = file.find_int(key(name));
  if (value && *value >= 0 && static_cast<uint64_t>(*value) < count) {
    id = static_cast<int32_t>(*value);
  }
}

// DeepSeek's "<｜end▁of▁sentence｜>" (full-width bars, U+2581 for spaces).
constexpr std::string_view kDeepSeekEndOfSentence =
    "<\xEF\xBD\x9C"
    "end\xE2\x96\x81"
    "of\xE2\x96\x81"
    "sentence\xEF\xBD\x9C>";

// Turn-ending tokens that converters do not always record, found by their spelling.
void find_end_of_generation(Vocabulary& v) {
  constexpr std::array<std::string_view, 9> kEndOfTurn = {
      "<|eot_id|>",      "<|im_end|>", "<|end|>", "<end_of_turn>",       "<|endoftext|>",
      "<|end_of_text|>", "<EOT>",      "_<EOT>",  kDeepSeekEndOfSentence};
  for (const std::string_view spelling : kEndOfTurn) {
    const auto it = std::find(v.tokens.begin(), v.tokens.end(), spelling);
    if (it == v.tokens.end()) continue;
    const auto id = static_cast<int32_t>(it - v.tokens.begin());
    if (v.eot < 0) v.eot = id;
    if (id != v.eos && id != v.eot) v.end_of_generation.push_back(id);
  }
  if (v.eom < 0) {
    const auto it = std::find(v.tokens.begin(), v.tokens.end(), "<|eom_id|>");
    if (it != v.tokens.end()) v.eom = static_cast<int32_t>(it - v.tokens.begin());
  }
}

}  // namespace

Vocabulary vocabulary_from_gguf(const gguf::GgufFile& file) {
  Vocabulary v;
  v.model = file.get_string(key("model"));
  v.pre = file.find_string(key("pre")).value_or("");
  if (v.model == "gpt2" && !PreTokenizer::is_known(v.pre)) {
    throw Error(ErrorCategory::kUnsupported,
                "unknown pre-tokenizer '" + v.pre + "' (" + key("pre") + ")");
  }
  apply_model_defaults(v);

  v.tokens = file.get_string_array(key("tokens"));
  const size_t count = v.tokens.size();
  if (count == 0) throw Error(ErrorCategory::kInvalidModel, key("tokens") + " is empty");
  if (file.contains(key("scores"))) {
    v.scores = file.get_float_array(key("scores"));
    if (v.scores.size() != count) {
      throw Error(ErrorCategory::kInvalidModel,
                  key("scores") + " has " + std::to_string(v.scores.size()) + " entries for " +
                      std::to_string(count) + " tokens");
    }
  }
  v.token_types = read_token_types(file, count);
  v.token_flags = read_token_flags(file, v);
  if (v.model == "gpt2") v.merges = file.get_string_array(key("merges"));

  const std::pair<std::string_view, int32_t*> ids[] = {
      {"bos_token_id", &v.bos},     {"eos_token_id", &v.eos},       {"unknown_token_id", &v.unk},
      {"padding_token_id", &v.pad}, {"seperator_token_id", &v.sep}, {"cls_token_id", &v.cls},
      {"mask_token_id", &v.mask},   {"eot_token_id", &v.eot},       {"eom_token_id", &v.eom}};
  for (const auto& [name, id] : ids) {
    if (*id >= static_cast<int32_t>(count)) *id = -1;  // a default the vocabulary is too small for
    read_id(file, name, count, *id);
  }
  v.add_bos = file.find_bool(key("add_bos_token")).value_or(v.add_bos);
  v.add_eos = file.find_bool(key("add_eos_token")).value_or(v.add_eos);
  v.add_space_prefix = file.find_bool(key("add_space_prefix")).value_or(v.add_space_prefix);
  find_end_of_generation(v);
  return v;
}

}  // namespace baton
