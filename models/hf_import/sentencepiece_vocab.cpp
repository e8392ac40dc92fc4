#include "models/hf_import/sentencepiece_vocab.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "baton/error.h"
#include "core/gguf/byte_reader.h"
#include "core/tokenizer/spm_tokenizer.h"
#include "core/tokenizer/tokenizer.h"
#include "models/hf_import/hf_json.h"

namespace baton::hf {
namespace {

// llama.cpp's scores for ids the SentencePiece model leaves empty and for added tokens.
constexpr float kPaddingScore = -10000.0f;
constexpr float kAddedTokenScore = -1000.0f;

int32_t code(TokenType type) {
  return static_cast<int32_t>(type);
}

TokenType piece_type(const sentencepiece::SentencePieceProcessor& sp, int id) {
  if (sp.IsUnknown(id)) return TokenType::kUnknown;
  if (sp.IsControl(id)) return TokenType::kControl;
  if (sp.IsUnused(id)) return TokenType::kUnused;
  if (sp.IsByte(id)) return TokenType::kByte;
  return TokenType::kNormal;
}

// Added tokens that checkpoints forget to mark special (llama.cpp's does_token_look_special).
bool looks_special(std::string_view token) {
  constexpr std::array<std::string_view, 4> kNames = {"<pad>", "<mask>", "<2mass>", "[@BOS@]"};
  const auto wrapped = [token](std::string_view open, std::string_view close) {
    return token.starts_with(open) && token.ends_with(close);
  };
  return std::find(kNames.begin(), kNames.end(), token) != kNames.end() || wrapped("<|", "|>") ||
         wrapped("<\xef\xbd\x9c", "\xef\xbd\x9c>") || wrapped("<unused", ">");
}

void load_pieces(const std::filesystem::path& model, int32_t vocab_size, SentencePieceVocab& v) {
  sentencepiece::SentencePieceProcessor sp;
  const auto status = sp.Load(model.string());
  if (!status.ok()) {
    throw Error(
        ErrorCategory::kInvalidModel,
        "cannot load " + model.string() + " as a SentencePiece model: " + status.ToString());
  }
  v.tokens.resize(vocab_size);
  v.scores.assign(vocab_size, kPaddingScore);
  v.types.assign(vocab_size, code(TokenType::kUnused));
  for (int32_t id = 0; id < vocab_size; ++id) {
    if (id >= sp.GetPieceSize()) {
      v.tokens[id] = "[PAD" + std::to_string(id) + "]";
      continue;
    }
    v.tokens[id] = sp.IdToPiece(id);
    v.scores[id] = sp.GetScore(id);
    v.types[id] = code(piece_type(sp, id));
  }
  const auto in_range = [vocab_size](int id) { return id >= 0 && id < vocab_size ? id : -1; };
  v.bos = in_range(sp.bos_id());
  v.eos = in_range(sp.eos_id());
  v.unk = in_range(sp.unk_id());
  v.pad = in_range(sp.pad_id());
}

void add_token(SentencePieceVocab& v, int64_t id, std::string text, TokenType type) {
  // llama.cpp skips ids past the vocabulary the same way.
  if (id < 0 || id >= static_cast<int64_t>(v.tokens.size())) return;
  v.tokens[id] = std::move(text);
  v.scores[id] = kAddedTokenScore;
  v.types[id] = code(type);
}

void read_added_tokens_file(const std::filesystem::path& path, SentencePieceVocab& v) {
  if (!std::filesystem::exists(path)) return;
  const nlohmann::json added = read_json_object(path);
  for (const auto& [text, id] : added.items()) {
    if (!id.is_number_integer()) {
      throw Error(ErrorCategory::kInvalidModel,
                  path.filename().string() + ": \"" + gguf::printable(text) + "\" has no token id");
    }
    add_token(v, id.get<int64_t>(), text, TokenType::kUserDefined);
  }
}

void read_added_tokens_decoder(const nlohmann::json& config, const std::filesystem::path& path,
                               SentencePieceVocab& v) {
  const auto decoder = config.find("added_tokens_decoder");
  if (decoder == config.end() || decoder->is_null()) return;
  if (!decoder->is_object()) {
    throw Error(ErrorCategory::kInvalidModel,
                path.filename().string() + ": \"added_tokens_decoder\" is not an object");
  }
  for (const auto& [key, token] : decoder->items()) {
    int64_t id = -1;
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
    const std::optional<std::string> content =
        token.is_object() ? find_string(token, "content", path) : std::nullopt;
    if (error != std::errc() || end != key.data() + key.size() || !content) {
      throw Error(ErrorCategory::kInvalidModel, path.filename().string() +
                                                    ": added_tokens_decoder entry '" +
                                                    gguf::printable(key) + "' is not a token");
    }
    if (find_bool(token, "special", path).value_or(false) || looks_special(*content)) {
      add_token(v, id, *content, TokenType::kControl);
    } else {
      // llama.cpp matches user-defined tokens against text whose spaces are still spaces.
      add_token(v, id, unescape_spaces(*content), TokenType::kUserDefined);
    }
  }
}

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

void read_tokenizer_config(const std::filesystem::path& dir, SentencePieceVocab& v) {
  const std::filesystem::path path = dir / "tokenizer_config.json";
  const nlohmann::json config =
      std::filesystem::exists(path) ? read_json_object(path) : nlohmann::json::object();
  read_added_tokens_decoder(config, path, v);
  v.add_bos = find_bool(config, "add_bos_token", path).value_or(v.add_bos);
  v.add_eos = find_bool(config, "add_eos_token", path).value_or(v.add_eos);
  v.chat_template = chat_template(config, dir);
}

// config.json's id when it names a token of the vocabulary, else the one SentencePiece gave.
void override_id(const std::optional<int64_t>& configured, int32_t& id, size_t count) {
  if (configured && *configured >= 0 && static_cast<uint64_t>(*configured) < count) {
    id = static_cast<int32_t>(*configured);
  }
}

}  // namespace

SentencePieceVocab read_sentencepiece_vocab(const std::filesystem::path& dir,
                                            const LlamaConfig& config) {
  const std::filesystem::path model = dir / "tokenizer.model";
  if (!std::filesystem::exists(model)) {
    if (std::filesystem::exists(dir / "tokenizer.json")) {
      throw Error(ErrorCategory::kUnsupported,
                  dir.string() +
                      " has tokenizer.json but no tokenizer.model: only SentencePiece "
                      "tokenizer.model vocabularies are supported for now");
    }
    throw Error(ErrorCategory::kInvalidModel, dir.string() + " has no tokenizer.model");
  }
  SentencePieceVocab v;
  load_pieces(model, config.vocab_size, v);
  read_added_tokens_file(dir / "added_tokens.json", v);
  read_tokenizer_config(dir, v);
  override_id(config.bos_token_id, v.bos, v.tokens.size());
  override_id(config.eos_token_id, v.eos, v.tokens.size());
  override_id(config.pad_token_id, v.pad, v.tokens.size());
  return v;
}

void add_vocab_metadata(const SentencePieceVocab& vocab, gguf::GgufWriter& writer) {
  writer.add_string("tokenizer.ggml.model", "llama");
  writer.add_string("tokenizer.ggml.pre", "default");
  writer.add_string_array("tokenizer.ggml.tokens", vocab.tokens);
  writer.add_float32_array("tokenizer.ggml.scores", vocab.scores);
  writer.add_int32_array("tokenizer.ggml.token_type", vocab.types);
  const std::pair<const char*, int32_t> ids[] = {{"tokenizer.ggml.bos_token_id", vocab.bos},
                                                 {"tokenizer.ggml.eos_token_id", vocab.eos},
                                                 {"tokenizer.ggml.unknown_token_id", vocab.unk},
                                                 {"tokenizer.ggml.padding_token_id", vocab.pad}};
  for (const auto& [key, id] : ids) {
    if (id >= 0) writer.add_uint32(key, static_cast<uint32_t>(id));
  }
  writer.add_bool("tokenizer.ggml.add_bos_token", vocab.add_bos);
  writer.add_bool("tokenizer.ggml.add_eos_token", vocab.add_eos);
  if (!vocab.chat_template.empty())
    writer.add_string("tokenizer.chat_template", vocab.chat_template);
}

}  // namespace baton::hf
