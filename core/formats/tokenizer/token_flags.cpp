#include "core/formats/tokenizer/token_flags.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>
#include <string_view>

#include "baton/error.h"

namespace baton {

namespace {

bool contains_any(std::string_view text, std::initializer_list<std::string_view> parts) {
  return std::any_of(parts.begin(), parts.end(),
                     [text](std::string_view part) { return text.find(part) != text.npos; });
}

bool is_special(const Vocabulary& v, size_t id) {
  if (v.token_types.empty()) return false;
  const TokenType type = v.token_types[id];
  return type == TokenType::kControl || type == TokenType::kUserDefined ||
         type == TokenType::kUnknown;
}

void set_flag(std::vector<uint8_t>& flags, const Vocabulary& v, std::string_view spelling,
              TokenFlag flag, bool on) {
  const auto it = std::find(v.tokens.begin(), v.tokens.end(), spelling);
  if (it == v.tokens.end()) return;
  uint8_t& bits = flags[it - v.tokens.begin()];
  bits = on ? (bits | flag) : (bits & ~flag);
}

std::vector<uint8_t> flags_from_keys(const gguf::GgufFile& file, size_t count) {
  std::vector<uint8_t> flags(count, 0);
  for (const auto& [key, flag] : kTokenFlagKeys) {
    if (!file.contains(key)) continue;
    for (const int64_t id : file.get_int_array(key)) {
      if (id < 0 || static_cast<uint64_t>(id) >= count) {
        throw Error(ErrorCategory::kInvalidModel, std::string(key) + " names token " +
                                                      std::to_string(id) + " of a vocabulary of " +
                                                      std::to_string(count));
      }
      flags[id] |= flag;
    }
  }
  return flags;
}

// GGUFs converted by llama.cpp do not record the flags; llama.cpp sets them for the models that
// depend on them (llama-vocab.cpp), and so does Baton, by the same names.
std::vector<uint8_t> flags_by_model(const gguf::GgufFile& file, const Vocabulary& v) {
  std::vector<uint8_t> flags(v.tokens.size(), 0);
  std::string name = file.find_string("general.name").value_or("");
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string architecture = file.find_string("general.architecture").value_or("");
  if (contains_any(v.pre, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
      contains_any(architecture, {"nomic-bert-moe", "jina-bert-v3"})) {
    set_flag(flags, v, "<mask>", kTokenLstrip, true);
  } else if (contains_any(name, {"phi-3", "phi3"})) {
    for (size_t id = 0; id < v.tokens.size(); ++id) {
      if (is_special(v, id)) flags[id] |= kTokenRstrip;
    }
    set_flag(flags, v, "</s>", kTokenRstrip, true);
    for (const std::string_view kept : {"<unk>", "<s>", "<|endoftext|>"}) {
      set_flag(flags, v, kept, kTokenRstrip, false);
    }
  } else if (contains_any(name, {"modern-bert"})) {
    set_flag(flags, v, "[MASK]", kTokenLstrip, true);
  }
  return flags;
}

}  // namespace

std::vector<uint8_t> read_token_flags(const gguf::GgufFile& file, const Vocabulary& vocabulary) {
  const bool recorded = std::any_of(std::begin(kTokenFlagKeys), std::end(kTokenFlagKeys),
                                    [&](const auto& entry) { return file.contains(entry.first); });
  std::vector<uint8_t> flags =
      recorded ? flags_from_keys(file, vocabulary.tokens.size()) : flags_by_model(file, vocabulary);
  if (std::all_of(flags.begin(), flags.end(), [](uint8_t bits) { return bits == 0; })) return {};
  return flags;
}

}  // namespace baton
