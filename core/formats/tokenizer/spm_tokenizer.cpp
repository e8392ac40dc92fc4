#include "core/formats/tokenizer/spm_tokenizer.h"

#include "core/formats/tokenizer/special_tokens.h"
#include "core/formats/tokenizer/symbol_merger.h"

namespace baton {

namespace {

constexpr std::string_view kEscapedSpace = "\xE2\x96\x81";  // U+2581 "▁"

}  // namespace

std::string unescape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    if (text.substr(pos, kEscapedSpace.size()) == kEscapedSpace) {
      out += ' ';
      pos += kEscapedSpace.size();
    } else {
      out += text[pos++];
    }
  }
  return out;
}

SpmTokenizer::SpmTokenizer(Vocabulary vocabulary)
    : Tokenizer(std::move(vocabulary)),
      index_(vocabulary_),
      pieces_(vocabulary_, unescape_spaces) {}

std::vector<int32_t> SpmTokenizer::encode(std::string_view text, bool add_special,
                                          bool parse_special) const {
  std::vector<int32_t> out;
  if (add_special && vocabulary_.add_bos && vocabulary_.bos >= 0) out.push_back(vocabulary_.bos);
  // SentencePiece sees each run of text between special tokens as a fresh sentence.
  bool after_special = true;
  for (const Fragment& fragment : split_special_tokens(text, vocabulary_, index_, parse_special)) {
    if (fragment.token >= 0) {
      out.push_back(fragment.token);
      after_special = true;
    } else {
      encode_text(fragment.text, vocabulary_.add_space_prefix && after_special, out);
      after_special = false;
    }
  }
  if (add_special && vocabulary_.add_eos && vocabulary_.eos >= 0) out.push_back(vocabulary_.eos);
  return out;
}

void SpmTokenizer::encode_text(std::string_view text, bool prefix_space,
                               std::vector<int32_t>& out) const {
  std::string escaped;
  escaped.reserve(text.size() + 3);
  if (prefix_space) escaped += kEscapedSpace;
  for (const char c : text) {
    if (c == ' ') {
      escaped += kEscapedSpace;
    } else {
      escaped += c;
    }
  }
  const auto priority = [this](std::string_view merged, size_t) -> std::optional<double> {
    const int32_t id = index_.find(merged);
    if (id < 0) return std::nullopt;
    return vocabulary_.scores.empty() ? 0.0 : vocabulary_.scores[id];
  };
  for (const std::string_view symbol : merge_symbols(escaped, priority)) emit_symbol(symbol, out);
}

void SpmTokenizer::emit_symbol(std::string_view symbol, std::vector<int32_t>& out) const {
  if (const int32_t id = index_.find(symbol); id >= 0) {
    out.push_back(id);
    return;
  }
  const size_t start = out.size();
  for (const char byte : symbol) {
    const int32_t id = index_.byte_token(static_cast<uint8_t>(byte));
    if (id < 0) {
      // Without byte tokens the whole character is unknown, as in SentencePiece.
      out.resize(start);
      if (vocabulary_.unk >= 0) out.push_back(vocabulary_.unk);
      return;
    }
    out.push_back(id);
  }
}

std::string SpmTokenizer::token_to_piece(int32_t id, bool render_special) const {
  return pieces_.piece(id, render_special);
}

}  // namespace baton
