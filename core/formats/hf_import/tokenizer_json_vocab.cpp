#include "core/formats/hf_import/tokenizer_json_vocab.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "baton/error.h"
#include "core/formats/gguf/byte_reader.h"
#include "core/formats/hf_import/hf_json.h"
#include "core/formats/tokenizer/pre_tokenizer.h"

namespace baton::hf {
namespace {

class TokenizerJson {
 public:
  explicit TokenizerJson(const std::filesystem::path& path)
      : path_(path), json_(read_json_object(path)) {}

  [[noreturn]] void invalid(const std::string& message) const {
    throw Error(ErrorCategory::kInvalidModel, path_.filename().string() + ": " + message);
  }
  [[noreturn]] void unsupported(const std::string& message) const {
    throw Error(ErrorCategory::kUnsupported, path_.filename().string() + ": " + message);
  }

  const nlohmann::json& at(std::string_view key) const {
    static const nlohmann::json kNull;
    const auto it = json_.find(key);
    return it == json_.end() ? kNull : *it;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  nlohmann::json json_;
};

bool is_byte_level(const nlohmann::json& p, bool with_regex) {
  return p.is_object() && p.value("type", "") == "ByteLevel" &&
         p.value("use_regex", true) == with_regex;
}

std::string quoted(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 200) text = text.substr(0, 200) + "...";
  return gguf::printable(text);
}

void check_model(const TokenizerJson& file, const nlohmann::json& model) {
  if (!model.is_object()) file.invalid("\"model\" is not an object");
  const std::string type = model.value("type", "BPE");
  if (type != "BPE") {
    file.unsupported("model type '" + gguf::printable(type) +
                     "' is not supported (supported: byte-level BPE, SentencePiece-style BPE)");
  }
}

void check_byte_level_normalizer(const TokenizerJson& file) {
  const nlohmann::json& normalizer = file.at("normalizer");
  if (!normalizer.is_null() && !(normalizer.is_object() && normalizer.value("type", "") == "NFC")) {
    file.unsupported("normalizer " + quoted(normalizer) + " is not supported (none or NFC)");
  }
}

std::unordered_map<std::string, int64_t> read_model_vocab(const TokenizerJson& file,
                                                          const nlohmann::json& model) {
  const auto vocab = model.find("vocab");
  if (vocab == model.end() || !vocab->is_object()) file.invalid("model.vocab is not an object");
  std::unordered_map<std::string, int64_t> ids;
  for (const auto& [token, id] : vocab->items()) {
    if (!id.is_number_integer()) {
      file.invalid("model.vocab[\"" + gguf::printable(token) + "\"] is not a token id");
    }
    ids.emplace(token, id.get<int64_t>());
  }
  return ids;
}

std::vector<std::string> read_merges(const TokenizerJson& file, const nlohmann::json& model,
                                     const std::unordered_map<std::string, int64_t>& ids) {
  const auto merges = model.find("merges");
  if (merges == model.end() || !merges->is_array()) file.invalid("model.merges is not a list");
  std::vector<std::string> out;
  out.reserve(merges->size());
  for (const nlohmann::json& merge : *merges) {
    std::pair<std::string, std::string> parts;
    if (merge.is_string()) {
      const std::string text = merge.get<std::string>();
      const size_t space = text.find(' ');
      if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
        file.invalid("merge \"" + gguf::printable(text) + "\" is not two tokens");
      }
      parts = {text.substr(0, space), text.substr(space + 1)};
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      parts = {merge[0].get<std::string>(), merge[1].get<std::string>()};
    } else {
      file.invalid("merge " + quoted(merge) + " is not two tokens");
    }
    for (const std::string& part : {parts.first, parts.second}) {
      if (!ids.contains(part)) {
        file.invalid("merge " + quoted(merge) + " uses '" + gguf::printable(part) +
                     "', which model.vocab lacks");
      }
    }
    out.push_back(parts.first + " " + parts.second);
  }
  return out;
}

void place_token(const TokenizerJson& file, HfVocab& v, int64_t id, std::string text,
                 TokenType type) {
  if (id < 0 || id >= static_cast<int64_t>(v.tokens.size())) {
    file.invalid("token '" + gguf::printable(text) + "' has id " + std::to_string(id) +
                 ", outside config.json's vocab_size " + std::to_string(v.tokens.size()));
  }
  v.tokens[id] = std::move(text);
  v.types[id] = static_cast<int32_t>(type);
}

void read_added_tokens(const TokenizerJson& file, HfVocab& v) {
  const nlohmann::json& added = file.at("added_tokens");
  if (added.is_null()) return;
  if (!added.is_array()) file.invalid("\"added_tokens\" is not a list");
  for (const nlohmann::json& token : added) {
    const std::optional<int64_t> id =
        token.is_object() ? find_int(token, "id", file.path()) : std::nullopt;
    const std::optional<std::string> content =
        token.is_object() ? find_string(token, "content", file.path()) : std::nullopt;
    if (!id || !content) file.invalid("added token " + quoted(token) + " has no id or content");
    const bool special = find_bool(token, "special", file.path()).value_or(false);
    place_token(file, v, *id, *content,
                special || looks_special(*content) ? TokenType::kControl : TokenType::kUserDefined);
    set_added_token_flags(v, *id, token, file.path());
  }
}

// Whether the post-processor puts a special token before a single sequence (Llama 3's
// TemplateProcessing does; Qwen2's ByteLevel and GPT-2's none do not).
bool post_processor_adds_bos(const nlohmann::json& post) {
  if (!post.is_object()) return false;
  if (post.value("type", "") == "Sequence" && post.contains("processors") &&
      post["processors"].is_array()) {
    for (const nlohmann::json& p : post["processors"]) {
      if (post_processor_adds_bos(p)) return true;
    }
    return false;
  }
  if (post.value("type", "") != "TemplateProcessing") return false;
  const auto single = post.find("single");
  return single != post.end() && single->is_array() && !single->empty() &&
         (*single)[0].is_object() && (*single)[0].contains("SpecialToken");
}

// A token named in tokenizer_config.json: a string or {"content": ...}.
int32_t configured_token(const nlohmann::json& tokenizer_config, std::string_view key,
                         const std::unordered_map<std::string, int32_t>& ids) {
  const auto it = tokenizer_config.find(key);
  if (it == tokenizer_config.end()) return -1;
  std::string text;
  if (it->is_string()) text = it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    text = (*it)["content"].get<std::string>();
  }
  const auto found = ids.find(text);
  return found == ids.end() ? -1 : found->second;
}

// SentencePiece-style BPE: byte_fallback to <0xXX> tokens, spaces as "▁", as transformers'
// converter writes Llama 2's, Mistral's and TinyLlama's tokenizer.json.
bool is_sentencepiece_style(const nlohmann::json& model) {
  return model.value("byte_fallback", false);
}

constexpr std::string_view kSpace = "\xE2\x96\x81";  // "▁", U+2581

// Whether the text gets a leading "▁": the older files say so with a Prepend("▁") normalizer
// (followed by Replace(" ", "▁")), newer ones with a Metaspace pre-tokenizer's prepend_scheme.
// Either way the result is SentencePiece's own tokenization, which the GGUF "llama" tokenizer
// performs. Throws Error(kUnsupported) quoting any other normalizer or pre-tokenizer.
bool sentencepiece_space_prefix(const TokenizerJson& file) {
  const nlohmann::json& normalizer = file.at("normalizer");
  const nlohmann::json& pre = file.at("pre_tokenizer");
  if (pre.is_object() && pre.value("type", "") == "Metaspace") {
    if (!normalizer.is_null()) {
      file.unsupported("normalizer " + quoted(normalizer) +
                       " is not supported before a Metaspace pre-tokenizer (none)");
    }
    if (pre.value("replacement", std::string(kSpace)) != kSpace) {
      file.unsupported("Metaspace replacement " + quoted(pre["replacement"]) +
                       " is not supported (U+2581)");
    }
    const std::string fallback = pre.value("add_prefix_space", true) ? "always" : "never";
    return pre.value("prepend_scheme", fallback) != "never";
  }
  if (!pre.is_null()) {
    file.unsupported("pre_tokenizer " + quoted(pre) +
                     " is not supported with a SentencePiece-style BPE (none or Metaspace)");
  }
  const bool sequence = normalizer.is_object() && normalizer.value("type", "") == "Sequence" &&
                        normalizer.contains("normalizers") && normalizer["normalizers"].is_array();
  bool prepend = false, replace = false;
  for (const nlohmann::json& step :
       sequence ? normalizer["normalizers"] : nlohmann::json::array({normalizer})) {
    const std::string type = step.is_object() ? step.value("type", "") : "";
    if (type == "Prepend" && step.value("prepend", "") == kSpace) {
      prepend = true;
    } else if (type == "Replace" && step.contains("pattern") && step["pattern"].is_object() &&
               step["pattern"].value("String", "") == " " && step.value("content", "") == kSpace) {
      replace = true;
    } else {
      replace = false;
      break;
    }
  }
  if (!replace) {
    file.unsupported("normalizer " + quoted(normalizer) +
                     " is not supported with a SentencePiece-style BPE (Prepend and Replace of "
                     "spaces with U+2581, or a Metaspace pre-tokenizer)");
  }
  return prepend;
}

bool is_byte_token(std::string_view token) {
  constexpr std::string_view kHex = "0123456789ABCDEF";
  return token.size() == 6 && token.starts_with("<0x") && token.back() == '>' &&
         kHex.find(token[3]) != std::string_view::npos &&
         kHex.find(token[4]) != std::string_view::npos;
}

// The GGUF "llama" tokenizer merges, at each step, the adjacent pair whose concatenation is the
// vocabulary token of highest score. Scoring each token by minus the rank of the first merge
// that makes it replays the BPE merges in their order, provided every split of a token into two
// vocabulary tokens is itself a merge, as in files converted from SentencePiece (a BPE trained
// by `tokenizers` may lack some, and then tokenize differently). Tokens no merge makes
// (characters, byte tokens, specials) get the lowest score, so they never win a merge. This
// departs from llama.cpp's converter, which scores every token of such a file -1000.
std::vector<float> merge_rank_scores(const std::vector<std::string>& merges,
                                     const std::unordered_map<std::string, int64_t>& ids,
                                     size_t vocab_size) {
  constexpr float kNeverMerged = -1e9f;
  std::vector<float> scores(vocab_size, kNeverMerged);
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const size_t space = merges[rank].find(' ');
    std::string merged = merges[rank].substr(0, space) + merges[rank].substr(space + 1);
    const auto it = ids.find(merged);
    if (it == ids.end() || it->second < 0 || static_cast<size_t>(it->second) >= vocab_size) {
      continue;  // a merge whose result the vocabulary lacks never applies
    }
    float& score = scores[it->second];
    score = std::max(score, -static_cast<float>(rank));
  }
  return scores;
}

std::string name_pre_tokenizer(const nlohmann::json& pre_tokenizer) {
  if (is_byte_level(pre_tokenizer, true)) return "gpt-2";
  const auto steps = pre_tokenizer.is_object() && pre_tokenizer.value("type", "") == "Sequence"
                         ? pre_tokenizer.find("pretokenizers")
                         : pre_tokenizer.end();
  if (steps != pre_tokenizer.end() && steps->is_array() && steps->size() == 2) {
    const nlohmann::json& first = (*steps)[0];
    const nlohmann::json& second = (*steps)[1];
    if (first.value("type", "") == "Split" && is_byte_level(second, false) &&
        first.contains("pattern") && first["pattern"].is_object()) {
      const std::string_view variant =
          PreTokenizer::variant_of_split(first["pattern"].value("Regex", ""));
      if (!variant.empty()) return std::string(variant);
    }
    if (first.value("type", "") == "Digits" && first.value("individual_digits", false) &&
        is_byte_level(second, true)) {
      return "starcoder";
    }
  }
  throw Error(ErrorCategory::kUnsupported,
              "tokenizer.json: pre_tokenizer " + quoted(pre_tokenizer) +
                  " is not one Baton implements (GPT-2's ByteLevel, Llama 3's, Qwen2's or GPT-4o's "
                  "Split then ByteLevel, StarCoder's Digits then ByteLevel)");
}

HfVocab read_vocab_file(const std::filesystem::path& dir, const LlamaConfig& config) {
  const TokenizerJson file(dir / "tokenizer.json");
  const nlohmann::json& model = file.at("model");
  check_model(file, model);
  const bool sentencepiece = is_sentencepiece_style(model);
  HfVocab v;
  if (sentencepiece) {
    v.add_space_prefix = sentencepiece_space_prefix(file);
  } else {
    check_byte_level_normalizer(file);
    v = HfVocab{.model = "gpt2", .pre = name_pre_tokenizer(file.at("pre_tokenizer"))};
  }
  v.tokens.resize(config.vocab_size);
  v.types.assign(config.vocab_size, static_cast<int32_t>(TokenType::kUnused));
  for (int32_t id = 0; id < config.vocab_size; ++id)
    v.tokens[id] = "[PAD" + std::to_string(id) + "]";
  const std::unordered_map<std::string, int64_t> vocab = read_model_vocab(file, model);
  for (const auto& [token, id] : vocab) {
    const bool byte = sentencepiece && is_byte_token(token);
    place_token(file, v, id, token, byte ? TokenType::kByte : TokenType::kNormal);
  }
  const std::vector<std::string> merges = read_merges(file, model, vocab);
  if (sentencepiece) {
    v.scores = merge_rank_scores(merges, vocab, v.tokens.size());
  } else {
    v.merges = merges;
  }
  read_added_tokens(file, v);
  const auto unk_token = model.find("unk_token");
  if (sentencepiece && unk_token != model.end() && unk_token->is_string()) {
    // The unknown token may be in model.vocab or only among the added tokens.
    const auto unk = std::find(v.tokens.begin(), v.tokens.end(), unk_token->get<std::string>());
    if (unk != v.tokens.end()) {
      v.unk = static_cast<int32_t>(unk - v.tokens.begin());
      v.types[v.unk] = static_cast<int32_t>(TokenType::kUnknown);
    }
  }

  const nlohmann::json tokenizer_config = read_tokenizer_config(dir);
  v.add_bos = post_processor_adds_bos(file.at("post_processor"));
  read_tokenizer_settings(tokenizer_config, dir, v);
  std::unordered_map<std::string, int32_t> ids;
  for (int32_t id = 0; id < config.vocab_size; ++id) ids.emplace(v.tokens[id], id);
  v.bos = configured_token(tokenizer_config, "bos_token", ids);
  v.eos = configured_token(tokenizer_config, "eos_token", ids);
  v.pad = configured_token(tokenizer_config, "pad_token", ids);
  apply_configured_ids(config, v);
  return v;
}

// The readers above test a field's type before they use it where the type decides what the file
// means; elsewhere nlohmann's accessors (value(), get()) throw on a value of another type. Either
// way the file is malformed, and the caller gets an Error saying so, never a foreign exception.
template <typename Read>
auto checked(const Read& read) {
  try {
    return read();
  } catch (const nlohmann::json::exception& e) {
    throw Error(
        ErrorCategory::kInvalidModel,
        std::string(
            "tokenizer.json or tokenizer_config.json: a field holds a value of the wrong type (") +
            e.what() + ")");
  }
}

}  // namespace

std::string pre_tokenizer_name(const nlohmann::json& pre_tokenizer) {
  return checked([&] { return name_pre_tokenizer(pre_tokenizer); });
}

HfVocab read_tokenizer_json_vocab(const std::filesystem::path& dir, const LlamaConfig& config) {
  return checked([&] { return read_vocab_file(dir, config); });
}

}  // namespace baton::hf
