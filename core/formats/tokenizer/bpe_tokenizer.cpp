#include "core/formats/tokenizer/bpe_tokenizer.h"

#include "core/formats/tokenizer/byte_level.h"
#include "core/formats/tokenizer/special_tokens.h"
#include "core/formats/tokenizer/symbol_merger.h"
#include "core/formats/tokenizer/utf8.h"

namespace baton {

BpeTokenizer::BpeTokenizer(Vocabulary vocabulary)
    : Tokenizer(std::move(vocabulary)),
      index_(vocabulary_),
      pieces_(vocabulary_, byte_level::decode),
      pre_tokenizer_(vocabulary_.pre) {
  merge_ranks_.reserve(vocabulary_.merges.size());
  for (size_t rank = 0; rank < vocabulary_.merges.size(); ++rank) {
    // A repeated merge keeps its first (highest priority) rank.
    merge_ranks_.emplace(vocabulary_.merges[rank], static_cast<int32_t>(rank));
  }
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool add_special,
                                          bool parse_special) const {
  std::vector<int32_t> out;
  if (add_special && vocabulary_.add_bos && vocabulary_.bos >= 0) out.push_back(vocabulary_.bos);
  for (const Fragment& fragment : split_special_tokens(text, vocabulary_, index_, parse_special)) {
    if (fragment.token >= 0) {
      out.push_back(fragment.token);
    } else {
      encode_text(fragment.text, out);
    }
  }
  if (add_special && vocabulary_.add_eos && vocabulary_.eos >= 0) out.push_back(vocabulary_.eos);
  return out;
}

void BpeTokenizer::encode_text(std::string_view text, std::vector<int32_t>& out) const {
  // The regexes need valid UTF-8; malformed bytes become U+FFFD as in llama.cpp.
  const std::string clean = utf8::sanitize(text);
  for (const std::string_view word : pre_tokenizer_.split(clean)) {
    encode_word(byte_level::encode(word), out);
  }
}

void BpeTokenizer::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (pre_tokenizer_.ignore_merges()) {
    if (const int32_t id = index_.find(word); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  std::string key;
  const auto priority = [&](std::string_view merged, size_t left_length) -> std::optional<double> {
    key.assign(merged.substr(0, left_length));
    key += ' ';
    key += merged.substr(left_length);
    const auto it = merge_ranks_.find(key);
    if (it == merge_ranks_.end()) return std::nullopt;
    return -static_cast<double>(it->second);
  };
  for (const std::string_view symbol : merge_symbols(word, priority)) {
    if (const int32_t id = index_.find(symbol); id >= 0) {
      out.push_back(id);
      continue;
    }
    // A merge whose result is not in the vocabulary: fall back to its characters.
    for (size_t pos = 0; pos < symbol.size();) {
      const size_t length = std::min(utf8::sequence_length(symbol[pos]), symbol.size() - pos);
      const int32_t id = index_.find(symbol.substr(pos, length));
      if (id >= 0) {
        out.push_back(id);
      } else if (vocabulary_.unk >= 0) {
        out.push_back(vocabulary_.unk);
      }
      pos += length;
    }
  }
}

std::string BpeTokenizer::token_to_piece(int32_t id, bool render_special) const {
  return pieces_.piece(id, render_special);
}

}  // namespace baton
