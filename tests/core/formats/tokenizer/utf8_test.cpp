#include "core/formats/tokenizer/utf8.h"

#include <gtest/gtest.h>

#include "core/formats/tokenizer/byte_level.h"

namespace baton {
namespace {

TEST(Utf8, MeasuresWellFormedCharacters) {
  EXPECT_EQ(utf8::valid_length("a", 0), 1u);
  EXPECT_EQ(utf8::valid_length("\xC3\xA9", 0), 2u);
  EXPECT_EQ(utf8::valid_length("\xE6\x97\xA5", 0), 3u);
  EXPECT_EQ(utf8::valid_length("\xF0\x9F\x99\x82", 0), 4u);
}

TEST(Utf8, RejectsMalformedSequences) {
  EXPECT_EQ(utf8::valid_length("\x80", 0), 0u);              // lone continuation
  EXPECT_EQ(utf8::valid_length("\xC0\xAF", 0), 0u);          // overlong
  EXPECT_EQ(utf8::valid_length("\xED\xA0\x80", 0), 0u);      // surrogate
  EXPECT_EQ(utf8::valid_length("\xF4\x90\x80\x80", 0), 0u);  // past U+10FFFF
  EXPECT_EQ(utf8::valid_length("\xE6\x97", 0), 0u);          // cut short
}

TEST(Utf8, TellsIncompleteFromMalformed) {
  EXPECT_TRUE(utf8::is_incomplete_prefix("\xE6", 0));
  EXPECT_TRUE(utf8::is_incomplete_prefix("\xE6\x97", 0));
  EXPECT_TRUE(utf8::is_incomplete_prefix("\xF0\x9F\x99", 0));
  EXPECT_FALSE(utf8::is_incomplete_prefix("\xE6\x97x", 0));
  EXPECT_FALSE(utf8::is_incomplete_prefix("\x80", 0));
  EXPECT_FALSE(utf8::is_incomplete_prefix("a", 0));
}

TEST(Utf8, SanitizeReplacesEachBadByte) {
  EXPECT_EQ(utf8::sanitize("ok\xFFok"), "ok\xEF\xBF\xBDok");
  EXPECT_EQ(utf8::sanitize("\xC3\xA9"), "\xC3\xA9");
}

TEST(Utf8, DecodesAndEncodesCodePoints) {
  for (const char32_t c : {U'a', U'\u00E9', U'\u65E5', U'\U0001F642'}) {
    std::string text;
    utf8::append(text, c);
    size_t pos = 0;
    EXPECT_EQ(utf8::decode(text, pos), c);
    EXPECT_EQ(pos, text.size());
  }
}

TEST(ByteLevel, MapsEveryByteReversibly) {
  std::string all_bytes;
  for (int byte = 0; byte < 256; ++byte) all_bytes += static_cast<char>(byte);
  const std::string encoded = byte_level::encode(all_bytes);
  EXPECT_EQ(byte_level::decode(encoded), all_bytes);
  EXPECT_EQ(byte_level::encode(" "), "\xC4\xA0");   // "Ġ"
  EXPECT_EQ(byte_level::encode("\n"), "\xC4\x8A");  // "Ċ"
  EXPECT_EQ(byte_level::encode("a!"), "a!");
}

}  // namespace
}  // namespace baton
