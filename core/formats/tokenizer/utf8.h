#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// UTF-8 helpers shared by the tokenizers and the detokenizer. Malformed input is never an
// error here: callers decide whether to keep raw bytes or substitute U+FFFD.
namespace baton::utf8 {

inline constexpr char32_t kReplacement = 0xFFFD;

// Bytes in the sequence a lead byte announces (1 for ASCII, continuation and invalid bytes).
inline size_t sequence_length(char lead) {
  const auto byte = static_cast<uint8_t>(lead);
  if (byte < 0xC0) return 1;
  if (byte < 0xE0) return 2;
  if (byte < 0xF0) return 3;
  return 4;
}

// Length of the well-formed character starting at text[pos], or 0 when the bytes there are
// malformed (bad lead, bad continuation, overlong, surrogate, beyond U+10FFFF) or cut short.
size_t valid_length(std::string_view text, size_t pos);

// True when text[pos..] is a proper, but incomplete, prefix of a well-formed character: more
// bytes could still complete it.
bool is_incomplete_prefix(std::string_view text, size_t pos);

// Decodes the character at text[pos] and advances pos; a malformed byte gives kReplacement and
// advances one byte.
char32_t decode(std::string_view text, size_t& pos);

void append(std::string& out, char32_t codepoint);

// Copies text, replacing every malformed byte with U+FFFD.
std::string sanitize(std::string_view text);

}  // namespace baton::utf8
