#include "core/formats/tokenizer/tokenizer.h"

#include <algorithm>

#include "baton/error.h"
#include "core/formats/tokenizer/bpe_tokenizer.h"
#include "core/formats/tokenizer/spm_tokenizer.h"
#include "core/formats/tokenizer/wordpiece_tokenizer.h"

namespace baton {

namespace {

void check_sizes(const Vocabulary& vocabulary) {
  const size_t count = vocabulary.tokens.size();
  if (count == 0) throw Error(ErrorCategory::kInvalidModel, "tokenizer has no tokens");
  if (!vocabulary.scores.empty() && vocabulary.scores.size() != count) {
    throw Error(ErrorCategory::kInvalidModel,
                "tokenizer has " + std::to_string(vocabulary.scores.size()) + " scores for " +
                    std::to_string(count) + " tokens");
  }
  if (!vocabulary.token_types.empty() && vocabulary.token_types.size() != count) {
    throw Error(ErrorCategory::kInvalidModel,
                "tokenizer has " + std::to_string(vocabulary.token_types.size()) +
                    " token types for " + std::to_string(count) + " tokens");
  }
}

void check_id(const Vocabulary& vocabulary, std::string_view name, int32_t id) {
  if (id < -1 || id >= static_cast<int32_t>(vocabulary.tokens.size())) {
    throw Error(ErrorCategory::kInvalidModel,
                std::string(name) + " token id " + std::to_string(id) +
                    " is outside the vocabulary of " + std::to_string(vocabulary.tokens.size()));
  }
}

void check_ids(const Vocabulary& v) {
  const std::pair<std::string_view, int32_t> ids[] = {
      {"bos", v.bos}, {"eos", v.eos},   {"unk", v.unk}, {"pad", v.pad}, {"sep", v.sep},
      {"cls", v.cls}, {"mask", v.mask}, {"eot", v.eot}, {"eom", v.eom}};
  for (const auto& [name, id] : ids) check_id(v, name, id);
  for (const int32_t id : v.end_of_generation) check_id(v, "end-of-generation", id);
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::create(Vocabulary vocabulary) {
  check_sizes(vocabulary);
  check_ids(vocabulary);
  if (vocabulary.model == "llama") return std::make_unique<SpmTokenizer>(std::move(vocabulary));
  if (vocabulary.model == "gpt2") return std::make_unique<BpeTokenizer>(std::move(vocabulary));
  if (vocabulary.model == "bert") {
    return std::make_unique<WordPieceTokenizer>(std::move(vocabulary));
  }
  throw Error(ErrorCategory::kUnsupported,
              "unknown tokenizer model '" + vocabulary.model + "' (tokenizer.ggml.model)");
}

bool Tokenizer::strips_leading_space() const {
  return (vocabulary_.model == "llama" && vocabulary_.add_space_prefix) ||
         vocabulary_.model == "bert";
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
  const bool strip = strips_leading_space();
  std::string text;
  bool at_start = true;
  for (const int32_t id : ids) {
    const std::string piece = token_to_piece(id, render_special);
    if (id == vocabulary_.bos) at_start = true;
    if (piece.empty()) continue;
    const bool drop_space = strip && at_start && piece.front() == ' ';
    text.append(piece, drop_space ? 1 : 0);
    at_start = false;
  }
  return text;
}

bool Tokenizer::is_end_of_generation(int32_t id) const {
  if (id < 0) return false;
  const Vocabulary& v = vocabulary_;
  return id == v.eos || id == v.eot || id == v.eom ||
         std::find(v.end_of_generation.begin(), v.end_of_generation.end(), id) !=
             v.end_of_generation.end();
}

}  // namespace baton
