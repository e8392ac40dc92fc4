#include <gtest/gtest.h>

#include "core/formats/tokenizer/tokenizer.h"
#include "core/formats/tokenizer/utf8.h"
#include "tests/core/formats/tokenizer/tokenizer_test_util.h"

namespace baton {
namespace {

// Two-, three- and four-byte characters between ASCII.
const std::string kMixed = "a\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x99\x82!";
const std::string kMixedNoSpaces = "a\xC3\xA9\xE6\x97\xA5\xE6\x9C\xAC\xF0\x9F\x99\x82!";

bool is_valid_utf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = utf8::valid_length(text, pos);
    if (length == 0) return false;
    pos += length;
  }
  return true;
}

std::string stream(IncrementalDetokenizer& detokenizer, const std::vector<int32_t>& ids) {
  std::string text;
  for (const int32_t id : ids) {
    const std::string part = detokenizer.push(id);
    EXPECT_TRUE(is_valid_utf8(part)) << "partial character emitted";
    text += part;
  }
  return text + detokenizer.flush();
}

TEST(IncrementalDetokenizer, HoldsBackBytesUntilTheCharacterIsComplete) {
  Vocabulary v = testing::byte_fallback_vocabulary();
  v.add_space_prefix = false;
  const auto tokenizer = Tokenizer::create(v);
  // No normal tokens: every byte of the text is its own byte token.
  const std::vector<int32_t> ids = tokenizer->encode(kMixedNoSpaces, false, false);
  ASSERT_EQ(ids.size(), kMixedNoSpaces.size());
  IncrementalDetokenizer detokenizer(*tokenizer);
  EXPECT_EQ(detokenizer.push(ids[0]), "a");
  EXPECT_EQ(detokenizer.push(ids[1]), "");
  EXPECT_EQ(detokenizer.push(ids[2]), "\xC3\xA9");
  IncrementalDetokenizer fresh(*tokenizer);
  EXPECT_EQ(stream(fresh, ids), kMixedNoSpaces);
}

TEST(IncrementalDetokenizer, EmitsWholeCharactersWhereverTheTextIsSplit) {
  for (size_t split = 1; split < kMixed.size(); ++split) {
    Vocabulary v =
        testing::byte_fallback_vocabulary({kMixed.substr(0, split), kMixed.substr(split)});
    v.add_space_prefix = false;
    const auto tokenizer = Tokenizer::create(v);
    const auto first = static_cast<int32_t>(v.tokens.size() - 2);
    IncrementalDetokenizer detokenizer(*tokenizer);
    const std::string head = detokenizer.push(first);
    EXPECT_TRUE(is_valid_utf8(head)) << "split at byte " << split;
    EXPECT_TRUE(kMixed.starts_with(head));
    const std::string tail = detokenizer.push(first + 1);
    EXPECT_EQ(head + tail + detokenizer.flush(), kMixed) << "split at byte " << split;
  }
}

TEST(IncrementalDetokenizer, ReplacesMalformedAndUnfinishedBytes) {
  const auto tokenizer = Tokenizer::create(testing::byte_fallback_vocabulary());
  const auto byte = [](int value) { return static_cast<int32_t>(3 + value); };
  IncrementalDetokenizer detokenizer(*tokenizer);
  // A stray continuation byte cannot start a character.
  EXPECT_EQ(detokenizer.push(byte(0x80)), "\xEF\xBF\xBD");
  EXPECT_EQ(detokenizer.push(byte(0xE6)), "");
  EXPECT_EQ(detokenizer.push(byte(0x97)), "");
  // "x" cannot continue the character, so the started one is replaced.
  EXPECT_EQ(detokenizer.push(byte('x')), "\xEF\xBF\xBD\xEF\xBF\xBDx");
  EXPECT_EQ(detokenizer.push(byte(0xF0)), "");
  EXPECT_EQ(detokenizer.flush(), "\xEF\xBF\xBD");
  EXPECT_EQ(detokenizer.flush(), "");
}

TEST(IncrementalDetokenizer, DropsTheSentencePieceSpaceAfterBos) {
  const auto tokenizer = Tokenizer::create(
      testing::byte_fallback_vocabulary({"\xE2\x96\x81", "\xE2\x96\x81H", "\xE2\x96\x81Hi"}));
  const int32_t hi = tokenizer->vocab_size() - 1;
  IncrementalDetokenizer detokenizer(*tokenizer);
  EXPECT_EQ(detokenizer.push(tokenizer->bos()), "");
  EXPECT_EQ(detokenizer.push(hi), "Hi");
  EXPECT_EQ(detokenizer.push(hi), " Hi");
  EXPECT_EQ(detokenizer.push(tokenizer->eos()), "");
  EXPECT_EQ(detokenizer.push(tokenizer->bos()), "");
  EXPECT_EQ(detokenizer.push(hi), "Hi");
}

TEST(IncrementalDetokenizer, MatchesDecode) {
  const auto tokenizer = Tokenizer::create(
      testing::byte_fallback_vocabulary({"\xE2\x96\x81", "\xE2\x96\x81H", "\xE2\x96\x81Hi"}));
  const std::vector<int32_t> ids = tokenizer->encode("Hi " + kMixed + " Hi", true, false);
  IncrementalDetokenizer detokenizer(*tokenizer);
  EXPECT_EQ(stream(detokenizer, ids), tokenizer->decode(ids));
  EXPECT_EQ(tokenizer->decode(ids), "Hi " + kMixed + " Hi");
}

}  // namespace
}  // namespace baton
