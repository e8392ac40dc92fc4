#include "core/formats/tokenizer/tokenizer.h"

#include <gtest/gtest.h>

#include <chrono>

#include "baton/error.h"
#include "core/formats/tokenizer/byte_level.h"
#include "tests/core/formats/tokenizer/tokenizer_test_util.h"
#include "tests/test_data.h"

namespace baton {
namespace {

// A tiny byte-level BPE vocabulary: the character of every byte, "ab" and "abc" built by
// merges, a user-defined "<tag>" and a control "<|end|>".
Vocabulary tiny_bpe() {
  Vocabulary v;
  v.model = "gpt2";
  v.pre = "gpt-2";
  for (int byte = 0; byte < 256; ++byte) {
    v.tokens.push_back(byte_level::encode(std::string(1, static_cast<char>(byte))));
  }
  v.token_types.assign(256, TokenType::kNormal);
  for (const auto& [text, type] : {std::pair{"ab", TokenType::kNormal},
                                   {"abc", TokenType::kNormal},
                                   {"<tag>", TokenType::kUserDefined},
                                   {"<|end|>", TokenType::kControl}}) {
    v.tokens.push_back(text);
    v.token_types.push_back(type);
  }
  v.merges = {"a b", "ab c"};
  v.bos = v.eos = 259;  // "<|end|>"
  return v;
}

constexpr int32_t kAb = 256, kAbc = 257, kTag = 258, kEnd = 259;

int32_t byte_id(char c) {
  return static_cast<unsigned char>(c);
}

TEST(BpeTokenizer, MergesInRankOrder) {
  const auto tokenizer = Tokenizer::create(tiny_bpe());
  EXPECT_EQ(tokenizer->encode("abc", false, false), (std::vector<int32_t>{kAbc}));
  EXPECT_EQ(tokenizer->encode("abd", false, false), (std::vector<int32_t>{kAb, byte_id('d')}));
  // The space starts the next word ("Ġab" has no merge), so "ab" still merges after it.
  const int32_t space = 0x20;
  EXPECT_EQ(tokenizer->encode("x ab", false, false),
            (std::vector<int32_t>{byte_id('x'), space, kAb}));
}

TEST(BpeTokenizer, SplitsUserDefinedTokensAlwaysAndControlTokensOnRequest) {
  const auto tokenizer = Tokenizer::create(tiny_bpe());
  EXPECT_EQ(tokenizer->encode("abc<tag>abc", false, false),
            (std::vector<int32_t>{kAbc, kTag, kAbc}));
  const std::vector<int32_t> plain = tokenizer->encode("abc<|end|>", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), kEnd), 0);
  EXPECT_EQ(tokenizer->encode("abc<|end|>", false, true), (std::vector<int32_t>{kAbc, kEnd}));
}

TEST(BpeTokenizer, AddsBosAndEosOnlyWhenTheVocabularySaysSo) {
  Vocabulary v = tiny_bpe();
  EXPECT_EQ(Tokenizer::create(v)->encode("abc", true, false), (std::vector<int32_t>{kAbc}));
  v.add_bos = v.add_eos = true;
  EXPECT_EQ(Tokenizer::create(v)->encode("abc", true, false),
            (std::vector<int32_t>{kEnd, kAbc, kEnd}));
}

TEST(BpeTokenizer, DecodesByteLevelPiecesAndHidesControlTokens) {
  const auto tokenizer = Tokenizer::create(tiny_bpe());
  const std::string text = "ab <tag> caf\xC3\xA9\n";
  const std::vector<int32_t> ids = tokenizer->encode(text, false, false);
  EXPECT_EQ(tokenizer->decode(ids), text);
  EXPECT_EQ(tokenizer->token_to_piece(kEnd), "");
  EXPECT_EQ(tokenizer->token_to_piece(kEnd, true), "<|end|>");
  EXPECT_TRUE(tokenizer->is_end_of_generation(kEnd));
  EXPECT_FALSE(tokenizer->strips_leading_space());
}

TEST(BpeTokenizer, ReplacesMalformedUtf8InsteadOfFailing) {
  const auto tokenizer = Tokenizer::create(tiny_bpe());
  EXPECT_EQ(tokenizer->decode(tokenizer->encode("a\xFF", false, false)), "a\xEF\xBF\xBD");
}

TEST(SpmTokenizer, FallsBackToBytesForUncoveredCharacters) {
  const auto tokenizer =
      Tokenizer::create(testing::byte_fallback_vocabulary({"\xE2\x96\x81h", "i"}));
  const auto ids = tokenizer->encode("hi\xC3\xA9", false, false);
  EXPECT_EQ(ids, (std::vector<int32_t>{259, 260, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(tokenizer->decode(ids), "hi\xC3\xA9");
}

TEST(SpmTokenizer, UsesUnknownWithoutByteTokens) {
  Vocabulary v;
  v.model = "llama";
  v.tokens = {"<unk>", "\xE2\x96\x81", "a"};
  v.token_types = {TokenType::kUnknown, TokenType::kNormal, TokenType::kNormal};
  v.unk = 0;
  EXPECT_EQ(Tokenizer::create(v)->encode("a\xC3\xA9", false, false),
            (std::vector<int32_t>{1, 2, 0}));
}

TEST(SpmTokenizer, MergesTheHighestScoringPairFirst) {
  Vocabulary v = testing::byte_fallback_vocabulary({"ab", "bc"});
  v.add_space_prefix = false;
  v.scores.assign(v.tokens.size(), 0.0f);
  v.scores[259] = -2.0f;  // ab
  v.scores[260] = -1.0f;  // bc
  EXPECT_EQ(Tokenizer::create(v)->encode("abcx", false, false),
            (std::vector<int32_t>{3 + 'a', 260, 3 + 'x'}));
  // Equal scores: the leftmost pair wins.
  v.scores[260] = -2.0f;
  EXPECT_EQ(Tokenizer::create(v)->encode("abcx", false, false),
            (std::vector<int32_t>{259, 3 + 'c', 3 + 'x'}));
}

TEST(Tokenizer, RejectsBadVocabularies) {
  Vocabulary unknown_model = tiny_bpe();
  unknown_model.model = "sentencepiece-unigram";
  try {
    Tokenizer::create(unknown_model);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.category(), ErrorCategory::kUnsupported);
    EXPECT_NE(std::string(error.what()).find("sentencepiece-unigram"), std::string::npos);
  }
  Vocabulary bad_id = tiny_bpe();
  bad_id.eos = 100000;
  EXPECT_THROW(Tokenizer::create(bad_id), Error);
  Vocabulary bad_pre = tiny_bpe();
  bad_pre.pre = "mystery";
  EXPECT_THROW(Tokenizer::create(bad_pre), Error);
  Vocabulary short_scores = testing::byte_fallback_vocabulary();
  short_scores.scores = {0.0f};
  EXPECT_THROW(Tokenizer::create(short_scores), Error);
}

// Encoding a few KB must stay in the millisecond range, including one very long word (which
// an O(n^2) merge loop would make slow): with the demo model's SentencePiece vocabulary, and with
// a byte-level BPE vocabulary whose merges join the long word's letters pairwise, then the pairs,
// and so on.
TEST(Tokenizer, EncodesLongTextQuickly) {
  Vocabulary bpe = tiny_bpe();
  for (std::string run = "x"; run.size() < 4096; run += run) {
    bpe.tokens.push_back(run + run);
    bpe.token_types.push_back(TokenType::kNormal);
    bpe.merges.push_back(run + " " + run);
  }
  std::string text;
  while (text.size() < 8192) text += "The quick brown fox jumps over the lazy dog, 12345 times! ";
  text += std::string(20000, 'x');
  const auto encode_quickly = [&](const Tokenizer& tokenizer) {
    const auto start = std::chrono::steady_clock::now();
    const auto ids = tokenizer.encode(text, false, false);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(tokenizer.decode(ids), text);
    EXPECT_LT(std::chrono::duration<double>(elapsed).count(), 1.0);
    return ids;
  };
  encode_quickly(*testing::load_tokenizer(testing::demo_model()));
  EXPECT_LT(encode_quickly(*Tokenizer::create(bpe)).size(), 8192u + 100) << "the run is merged";
}

}  // namespace
}  // namespace baton
