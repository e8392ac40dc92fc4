#include "core/formats/hf_import/sentencepiece_vocab.h"

#include <sentencepiece_processor.h>

#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "baton/error.h"
#include "core/formats/gguf/byte_reader.h"
#include "core/formats/hf_import/hf_json.h"
#include "core/formats/tokenizer/spm_tokenizer.h"
#include "core/formats/tokenizer/tokenizer.h"

namespace baton::hf {
namespace {

// llama.cpp's score for ids the SentencePiece model leaves empty.
constexpr float kPaddingScore = -10000.0f;

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

void load_pieces(const std::filesystem::path& model, int32_t vocab_size, HfVocab& v) {
  sentencepiece::SentencePieceProcessor sp;
  const auto status = sp.Load(model.string());
  if (!status.ok()) {
    throw Error(
        ErrorCategory::kInvalidModel,
        "cannot load " + model.string() + " as a SentencePiece model: " + status.ToString());
  }
  // The model's add_dummy_prefix (off in Gemma's) shows in whether a bare word gains a "▁".
  std::vector<std::string> pieces;
  v.add_space_prefix =
      sp.Encode("a", &pieces).ok() && !pieces.empty() && pieces.front().starts_with("\xe2\x96\x81");
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

void read_added_tokens_file(const std::filesystem::path& path, HfVocab& v) {
  if (!std::filesystem::exists(path)) return;
  const nlohmann::json added = read_json_object(path);
  for (const auto& [text, id] : added.items()) {
    if (!id.is_number_integer()) {
      throw Error(ErrorCategory::kInvalidModel,
                  path.filename().string() + ": \"" + gguf::printable(text) + "\" has no token id");
    }
    set_added_token(v, id.get<int64_t>(), text, TokenType::kUserDefined);
  }
}

void read_added_tokens_decoder(const nlohmann::json& config, const std::filesystem::path& path,
                               HfVocab& v) {
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
      set_added_token(v, id, *content, TokenType::kControl);
    } else {
      // llama.cpp matches user-defined tokens against text whose spaces are still spaces.
      set_added_token(v, id, unescape_spaces(*content), TokenType::kUserDefined);
    }
    set_added_token_flags(v, id, token, path);
  }
}

}  // namespace

HfVocab read_sentencepiece_vocab(const std::filesystem::path& dir, const LlamaConfig& config) {
  const std::filesystem::path model = dir / "tokenizer.model";
  HfVocab v;
  load_pieces(model, config.vocab_size, v);
  read_added_tokens_file(dir / "added_tokens.json", v);
  const nlohmann::json tokenizer_config = read_tokenizer_config(dir);
  read_added_tokens_decoder(tokenizer_config, dir / "tokenizer_config.json", v);
  read_tokenizer_settings(tokenizer_config, dir, v);
  apply_configured_ids(config, v);
  return v;
}

}  // namespace baton::hf
