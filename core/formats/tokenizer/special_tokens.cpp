#include "core/formats/tokenizer/special_tokens.h"

#include <unicode/uchar.h>

#include <bitset>

#include "core/formats/tokenizer/utf8.h"

namespace baton {

namespace {

// C's isspace in the "C" locale, which llama.cpp strips with: ASCII whitespace only.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::string_view strip_right(std::string_view text) {
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::string_view strip_left(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  return text;
}

bool is_word_character(char32_t c) {
  return c == '_' || u_isalnum(static_cast<UChar32>(c));
}

// Whether a word character sits right before or right after text[at, at + size): a
// single-word token is not cut out of a longer word.
bool touches_word(std::string_view text, size_t at, size_t size) {
  if (at > 0) {
    size_t start = at - 1;
    while (start > 0 && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
    if (is_word_character(utf8::decode(text, start))) return true;
  }
  size_t end = at + size;
  return end < text.size() && is_word_character(utf8::decode(text, end));
}

// Splits every text fragment at each occurrence of `spelling`, dropping the whitespace that
// the token's flags say it absorbs.
void cut_out(std::vector<Fragment>& fragments, int32_t token, std::string_view spelling,
             uint8_t flags, std::vector<Fragment>& scratch) {
  bool found = false;
  scratch.clear();
  for (const Fragment& fragment : fragments) {
    if (fragment.token >= 0) {
      scratch.push_back(fragment);
      continue;
    }
    std::string_view rest = fragment.text;
    size_t from = 0;
    for (size_t at = rest.find(spelling); at != std::string_view::npos;
         at = rest.find(spelling, from)) {
      if ((flags & kTokenSingleWord) && touches_word(rest, at, spelling.size())) {
        from = at + 1;
        continue;
      }
      found = true;
      std::string_view left = rest.substr(0, at);
      if (flags & kTokenLstrip) left = strip_right(left);
      if (!left.empty()) scratch.push_back({-1, left});
      scratch.push_back({token, spelling});
      rest.remove_prefix(at + spelling.size());
      if (flags & kTokenRstrip) rest = strip_left(rest);
      from = 0;
    }
    if (!rest.empty()) scratch.push_back({-1, rest});
  }
  if (found) fragments.swap(scratch);
}

}  // namespace

std::vector<Fragment> split_special_tokens(std::string_view text, const Vocabulary& vocabulary,
                                           const VocabIndex& index, bool parse_special) {
  std::vector<Fragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({-1, text});

  // Most special tokens cannot occur at all; a first-byte check skips them cheaply.
  std::bitset<256> present;
  for (const char c : text) present.set(static_cast<uint8_t>(c));

  std::vector<Fragment> scratch;
  for (const int32_t id : index.special_tokens()) {
    const std::string& spelling = vocabulary.tokens[id];
    if (!parse_special && index.type(id) != TokenType::kUserDefined) continue;
    if (spelling.size() > text.size() || !present.test(static_cast<uint8_t>(spelling[0]))) {
      continue;
    }
    const uint8_t flags = vocabulary.token_flags.empty() ? 0 : vocabulary.token_flags[id];
    cut_out(fragments, id, spelling, flags, scratch);
  }
  return fragments;
}

}  // namespace baton
