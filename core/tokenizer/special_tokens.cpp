#include "core/tokenizer/special_tokens.h"

#include <bitset>

namespace baton {

namespace {

// Splits every text fragment at each occurrence of `spelling`.
void cut_out(std::vector<Fragment>& fragments, int32_t token, std::string_view spelling,
             std::vector<Fragment>& scratch) {
  bool found = false;
  scratch.clear();
  for (const Fragment& fragment : fragments) {
    if (fragment.token >= 0) {
      scratch.push_back(fragment);
      continue;
    }
    std::string_view rest = fragment.text;
    for (size_t at = rest.find(spelling); at != std::string_view::npos; at = rest.find(spelling)) {
      found = true;
      if (at > 0) scratch.push_back({-1, rest.substr(0, at)});
      scratch.push_back({token, spelling});
      rest.remove_prefix(at + spelling.size());
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
    cut_out(fragments, id, spelling, scratch);
  }
  return fragments;
}

}  // namespace baton
