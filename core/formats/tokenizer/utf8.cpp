#include "core/formats/tokenizer/utf8.h"

namespace baton::utf8 {

namespace {

bool is_continuation(char c) {
  return (static_cast<uint8_t>(c) & 0xC0) == 0x80;
}

// Allowed range of the second byte for a lead byte (RFC 3629 table), which rules out overlong
// forms, surrogates and code points past U+10FFFF in one check.
void second_byte_range(uint8_t lead, uint8_t& low, uint8_t& high) {
  low = 0x80;
  high = 0xBF;
  if (lead == 0xE0) low = 0xA0;
  if (lead == 0xED) high = 0x9F;
  if (lead == 0xF0) low = 0x90;
  if (lead == 0xF4) high = 0x8F;
}

bool is_valid_lead(uint8_t lead) {
  return lead < 0x80 || (lead >= 0xC2 && lead <= 0xF4);
}

// How many bytes starting at pos agree with a well-formed sequence (up to its full length).
size_t matching_prefix(std::string_view text, size_t pos, size_t& needed) {
  const auto lead = static_cast<uint8_t>(text[pos]);
  needed = is_valid_lead(lead) ? sequence_length(text[pos]) : 0;
  if (needed == 0) return 0;
  size_t have = 1;
  while (have < needed && pos + have < text.size()) {
    const auto byte = static_cast<uint8_t>(text[pos + have]);
    if (have == 1) {
      uint8_t low, high;
      second_byte_range(lead, low, high);
      if (byte < low || byte > high) break;
    } else if (!is_continuation(text[pos + have])) {
      break;
    }
    ++have;
  }
  return have;
}

}  // namespace

size_t valid_length(std::string_view text, size_t pos) {
  size_t needed = 0;
  const size_t have = matching_prefix(text, pos, needed);
  return needed != 0 && have == needed ? needed : 0;
}

bool is_incomplete_prefix(std::string_view text, size_t pos) {
  size_t needed = 0;
  const size_t have = matching_prefix(text, pos, needed);
  return needed != 0 && have < needed && pos + have == text.size();
}

char32_t decode(std::string_view text, size_t& pos) {
  const size_t length = valid_length(text, pos);
  if (length == 0) {
    ++pos;
    return kReplacement;
  }
  const auto lead = static_cast<uint8_t>(text[pos]);
  char32_t codepoint = length == 1 ? lead : lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    codepoint = (codepoint << 6) | (static_cast<uint8_t>(text[pos + i]) & 0x3F);
  }
  pos += length;
  return codepoint;
}

void append(std::string& out, char32_t codepoint) {
  if (codepoint < 0x80) {
    out += static_cast<char>(codepoint);
  } else if (codepoint < 0x800) {
    out += static_cast<char>(0xC0 | (codepoint >> 6));
    out += static_cast<char>(0x80 | (codepoint & 0x3F));
  } else if (codepoint < 0x10000) {
    out += static_cast<char>(0xE0 | (codepoint >> 12));
    out += static_cast<char>(0x80 | ((codepoint >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (codepoint & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (codepoint >> 18));
    out += static_cast<char>(0x80 | ((codepoint >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((codepoint >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (codepoint & 0x3F));
  }
}

std::string sanitize(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t length = valid_length(text, pos);
    if (length == 0) {
      append(out, kReplacement);
      ++pos;
    } else {
      out.append(text.substr(pos, length));
      pos += length;
    }
  }
  return out;
}

}  // namespace baton::utf8
