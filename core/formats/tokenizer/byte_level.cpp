#include "core/formats/tokenizer/byte_level.h"

#include <array>
#include <cstdint>

#include "core/formats/tokenizer/utf8.h"

namespace baton::byte_level {

namespace {

bool maps_to_itself(int byte) {
  return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) ||
         (byte >= 0xAE && byte <= 0xFF);
}

struct Tables {
  std::array<std::string, 256> byte_to_utf8;
  std::array<int, 512> codepoint_to_byte;  // every mapped code point is below 512

  Tables() {
    codepoint_to_byte.fill(-1);
    char32_t next_free = 256;
    for (int byte = 0; byte < 256; ++byte) {
      const char32_t codepoint = maps_to_itself(byte) ? byte : next_free++;
      utf8::append(byte_to_utf8[byte], codepoint);
      codepoint_to_byte[codepoint] = byte;
    }
  }
};

const Tables& tables() {
  static const Tables instance;
  return instance;
}

}  // namespace

std::string encode(std::string_view text) {
  const Tables& t = tables();
  std::string out;
  out.reserve(text.size() * 2);
  for (const char c : text) out += t.byte_to_utf8[static_cast<uint8_t>(c)];
  return out;
}

std::string decode(std::string_view text) {
  const Tables& t = tables();
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    const char32_t codepoint = utf8::decode(text, pos);
    if (codepoint < t.codepoint_to_byte.size() && t.codepoint_to_byte[codepoint] >= 0) {
      out += static_cast<char>(t.codepoint_to_byte[codepoint]);
    } else {
      out.append(text.substr(start, pos - start));
    }
  }
  return out;
}

}  // namespace baton::byte_level
