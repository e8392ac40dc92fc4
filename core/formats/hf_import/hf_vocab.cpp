#include "core/formats/hf_import/hf_vocab.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "baton/error.h"
#include "core/formats/hf_import/hf_json.h"
#include "core/formats/hf_import/sentencepiece_vocab.h"
#include "core/formats/hf_import/tokenizer_json_vocab.h"

namespace baton::hf {
namespace {

// A template string, or the one named "default" of a list of {"name", "template"}.
std::string chat_template(const nlohmann::json& config, const std::filesystem::path& dir) {
  const auto value = config.find("chat_template");
  if (value != config.end() && value->is_string()) return value->get<std::string>();
  if (value != config.end() && value->is_array()) {
    for (const nlohmann::json& named : *value) {
      if (named.is_object() && named.value("name", "") == "default" && named.contains("template") &&
          named["template"].is_string()) {
        return named["template"].get<std::string>();
      }
    }
    return "";
  }
  // Newer transformers versions save the template beside the config.
  const std::filesystem::path jinja = dir / "chat_template.jinja";
  return std::filesystem::exists(jinja) ? read_text_file(jinja) : "";
}

constexpr std::pair<const char*, TokenFlag> kAddedTokenFlags[] = {
    {"lstrip", kTokenLstrip}, {"rstrip", kTokenRstrip}, {"single_word", kTokenSingleWord}};

// Every key is written, empty lists included: a file with the keys says its tokens carry no
// flags, where one without them leaves the flags to llama.cpp's per-model rules.
void add_token_flags(const std::vector<uint8_t>& flags, gguf::GgufWriter& writer) {
  for (const auto& [key, flag] : kTokenFlagKeys) {
    std::vector<int32_t> ids;
    for (size_t id = 0; id < flags.size(); ++id) {
      if (flags[id] & flag) ids.push_back(static_cast<int32_t>(id));
    }
    writer.add_int32_array(std::string(key), ids);
  }
}

void override_id(const std::optional<int64_t>& configured, int32_t& id, size_t count) {
  if (configured && *configured >= 0 && static_cast<uint64_t>(*configured) < count) {
    id = static_cast<int32_t>(*configured);
  }
}

}  // namespace

HfVocab read_vocab(const std::filesystem::path& dir, const LlamaConfig& config) {
  if (std::filesystem::exists(dir / "tokenizer.model")) {
    return read_sentencepiece_vocab(dir, config);
  }
  if (std::filesystem::exists(dir / "tokenizer.json"))
    return read_tokenizer_json_vocab(dir, config);
  throw Error(ErrorCategory::kInvalidModel,
              dir.string() + " has neither tokenizer.model nor tokenizer.json");
}

void add_vocab_metadata(const HfVocab& vocab, gguf::GgufWriter& writer) {
  writer.add_string("tokenizer.ggml.model", vocab.model);
  writer.add_string("tokenizer.ggml.pre", vocab.pre);
  writer.add_string_array("tokenizer.ggml.tokens", vocab.tokens);
  if (!vocab.scores.empty()) writer.add_float32_array("tokenizer.ggml.scores", vocab.scores);
  writer.add_int32_array("tokenizer.ggml.token_type", vocab.types);
  if (!vocab.merges.empty()) writer.add_string_array("tokenizer.ggml.merges", vocab.merges);
  const std::pair<const char*, int32_t> ids[] = {{"tokenizer.ggml.bos_token_id", vocab.bos},
                                                 {"tokenizer.ggml.eos_token_id", vocab.eos},
                                                 {"tokenizer.ggml.unknown_token_id", vocab.unk},
                                                 {"tokenizer.ggml.padding_token_id", vocab.pad}};
  for (const auto& [key, id] : ids) {
    if (id >= 0) writer.add_uint32(key, static_cast<uint32_t>(id));
  }
  writer.add_bool("tokenizer.ggml.add_bos_token", vocab.add_bos);
  writer.add_bool("tokenizer.ggml.add_eos_token", vocab.add_eos);
  if (vocab.model == "llama") {
    writer.add_bool("tokenizer.ggml.add_space_prefix", vocab.add_space_prefix);
  }
  if (!vocab.chat_template.empty()) {
    writer.add_string("tokenizer.chat_template", vocab.chat_template);
  }
  if (!vocab.token_flags.empty()) add_token_flags(vocab.token_flags, writer);
}

void set_added_token_flags(HfVocab& v, int64_t id, const nlohmann::json& token,
                           const std::filesystem::path& path) {
  if (id < 0 || id >= static_cast<int64_t>(v.tokens.size())) return;
  v.token_flags.resize(v.tokens.size(), 0);
  for (const auto& [name, flag] : kAddedTokenFlags) {
    if (find_bool(token, name, path).value_or(false)) v.token_flags[id] |= flag;
  }
}

void set_added_token(HfVocab& v, int64_t id, std::string text, TokenType type) {
  if (id < 0 || id >= static_cast<int64_t>(v.tokens.size())) return;
  v.tokens[id] = std::move(text);
  if (!v.scores.empty()) v.scores[id] = kAddedTokenScore;
  v.types[id] = static_cast<int32_t>(type);
}

bool looks_special(std::string_view token) {
  constexpr std::array<std::string_view, 4> kNames = {"<pad>", "<mask>", "<2mass>", "[@BOS@]"};
  const auto wrapped = [token](std::string_view open, std::string_view close) {
    return token.starts_with(open) && token.ends_with(close);
  };
  return std::find(kNames.begin(), kNames.end(), token) != kNames.end() || wrapped("<|", "|>") ||
         wrapped("<\xef\xbd\x9c", "\xef\xbd\x9c>") || wrapped("<unused", ">");
}

nlohmann::json read_tokenizer_config(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "tokenizer_config.json";
  return std::filesystem::exists(path) ? read_json_object(path) : nlohmann::json::object();
}

void read_tokenizer_settings(const nlohmann::json& tokenizer_config,
                             const std::filesystem::path& dir, HfVocab& v) {
  const std::filesystem::path path = dir / "tokenizer_config.json";
  v.add_bos = find_bool(tokenizer_config, "add_bos_token", path).value_or(v.add_bos);
  v.add_eos = find_bool(tokenizer_config, "add_eos_token", path).value_or(v.add_eos);
  v.chat_template = chat_template(tokenizer_config, dir);
}

void apply_configured_ids(const LlamaConfig& config, HfVocab& v) {
  override_id(config.bos_token_id, v.bos, v.tokens.size());
  override_id(config.eos_token_id, v.eos, v.tokens.size());
  override_id(config.pad_token_id, v.pad, v.tokens.size());
}

}  // namespace baton::hf
