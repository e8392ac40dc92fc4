// lstrip, rstrip and single_word on hand-made vocabularies: what each flag takes from the text
// beside a special token, for SentencePiece and byte-level BPE alike.
#include "core/formats/tokenizer/special_tokens.h"

#include <gtest/gtest.h>

#include "core/formats/tokenizer/vocab_index.h"
#include "tests/core/formats/tokenizer/tokenizer_test_util.h"

namespace baton {
namespace {

// The byte-fallback vocabulary with "<|end|>" (control) and "<w>" (user-defined) after it.
struct FlaggedVocabulary {
  explicit FlaggedVocabulary(uint8_t end_flags, uint8_t word_flags = 0)
      : vocabulary(testing::byte_fallback_vocabulary({"\xE2\x96\x81"})) {
    end = add(vocabulary, "<|end|>", TokenType::kControl, end_flags);
    word = add(vocabulary, "<w>", TokenType::kUserDefined, word_flags);
  }
  static int32_t add(Vocabulary& v, const std::string& text, TokenType type, uint8_t flags) {
    v.tokens.push_back(text);
    v.token_types.push_back(type);
    v.token_flags.resize(v.tokens.size(), 0);
    v.token_flags.back() = flags;
    return static_cast<int32_t>(v.tokens.size() - 1);
  }
  // The fragments as "text" strings and "#id" tokens.
  std::vector<std::string> split(std::string_view text, bool parse_special = true) const {
    const VocabIndex index(vocabulary);
    std::vector<std::string> out;
    for (const Fragment& f : split_special_tokens(text, vocabulary, index, parse_special)) {
      out.push_back(f.token >= 0 ? spelled(f.token) : std::string(f.text));
    }
    return out;
  }
  static std::string spelled(int32_t token) {
    std::string out = "#";
    out += std::to_string(token);
    return out;
  }
  Vocabulary vocabulary;
  int32_t end = -1, word = -1;
};

using Pieces = std::vector<std::string>;

TEST(SpecialTokenFlags, WithoutFlagsTheWhitespaceStaysText) {
  const FlaggedVocabulary v(0);
  const std::string end = FlaggedVocabulary::spelled(v.end);
  EXPECT_EQ(v.split("a \n<|end|>\t b"), (Pieces{"a \n", end, "\t b"}));
}

TEST(SpecialTokenFlags, RstripTakesTheWhitespaceAfterTheToken) {
  const FlaggedVocabulary v(kTokenRstrip);
  const std::string end = FlaggedVocabulary::spelled(v.end);
  EXPECT_EQ(v.split("a <|end|> \n\t\r\v\fb <|end|>  "), (Pieces{"a ", end, "b ", end}));
  EXPECT_EQ(v.split("<|end|><|end|>  x"), (Pieces{end, end, "x"}));
}

TEST(SpecialTokenFlags, LstripTakesTheWhitespaceBeforeTheToken) {
  const FlaggedVocabulary v(kTokenLstrip);
  const std::string end = FlaggedVocabulary::spelled(v.end);
  EXPECT_EQ(v.split("a \n <|end|> b  <|end|>"), (Pieces{"a", end, " b", end}));
  EXPECT_EQ(v.split("   <|end|>"), (Pieces{end}));
}

TEST(SpecialTokenFlags, OnlyAsciiWhitespaceIsStrippedAsInLlamaCpp) {
  const FlaggedVocabulary v(kTokenLstrip | kTokenRstrip);
  const std::string end = FlaggedVocabulary::spelled(v.end);
  const std::string nbsp = "\xC2\xA0";
  EXPECT_EQ(v.split("a" + nbsp + "<|end|>" + nbsp + "b"), (Pieces{"a" + nbsp, end, nbsp + "b"}));
}

TEST(SpecialTokenFlags, ControlTokensLeftAsTextKeepTheirWhitespace) {
  const FlaggedVocabulary v(kTokenLstrip | kTokenRstrip);
  EXPECT_EQ(v.split("a <|end|> b", false), (Pieces{"a <|end|> b"}));
}

TEST(SpecialTokenFlags, SingleWordTokensAreNotCutOutOfWords) {
  const FlaggedVocabulary v(0, kTokenSingleWord);
  const std::string word = FlaggedVocabulary::spelled(v.word);
  EXPECT_EQ(v.split("a<w>b"), (Pieces{"a<w>b"}));
  EXPECT_EQ(v.split("_<w>"), (Pieces{"_<w>"}));
  EXPECT_EQ(v.split("\xC3\xA9<w>"), (Pieces{"\xC3\xA9<w>"}));  // "é" is a letter too
  EXPECT_EQ(v.split("a <w>, x<w>y <w>"), (Pieces{"a ", word, ", x<w>y ", word}));
  EXPECT_EQ(v.split("<w>"), (Pieces{word}));
}

TEST(SpecialTokenFlags, SentencePieceStartsTheTextAfterAnRstripTokenAfresh) {
  FlaggedVocabulary v(kTokenRstrip);
  const auto tokenizer = Tokenizer::create(v.vocabulary);
  // The space the token absorbed is gone; SentencePiece's own prefix "▁" comes back.
  EXPECT_EQ(tokenizer->encode("<|end|>   a", false, true),
            tokenizer->encode("<|end|>a", false, true));
  v.vocabulary.token_flags.clear();
  const auto plain = Tokenizer::create(v.vocabulary);
  EXPECT_NE(plain->encode("<|end|>   a", false, true), plain->encode("<|end|>a", false, true));
}

}  // namespace
}  // namespace baton
