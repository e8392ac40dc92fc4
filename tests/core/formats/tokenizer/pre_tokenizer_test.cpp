#include "core/formats/tokenizer/pre_tokenizer.h"

#include <gtest/gtest.h>

#include "baton/error.h"

namespace baton {
namespace {

std::vector<std::string> words(std::string_view variant, std::string_view text) {
  std::vector<std::string> out;
  for (const std::string_view word : PreTokenizer(variant).split(text)) out.emplace_back(word);
  return out;
}

using Words = std::vector<std::string>;

TEST(PreTokenizer, Gpt2KeepsTheSpaceWithTheFollowingWord) {
  EXPECT_EQ(words("gpt-2", "Hello world's  end!!"),
            (Words{"Hello", " world", "'s", " ", " end", "!!"}));
  EXPECT_EQ(words("gpt-2", "a 123"), (Words{"a", " 123"}));
}

TEST(PreTokenizer, Llama3GroupsDigitsInThrees) {
  EXPECT_EQ(words("llama-bpe", "12345 I'M\n\nok"), (Words{"123", "45", " I", "'M", "\n\n", "ok"}));
  EXPECT_TRUE(PreTokenizer("llama-bpe").ignore_merges());
  EXPECT_FALSE(PreTokenizer("gpt-2").ignore_merges());
}

TEST(PreTokenizer, Qwen2SplitsEveryDigit) {
  EXPECT_EQ(words("qwen2", "x=123"), (Words{"x", "=", "1", "2", "3"}));
}

// Python's regex module, which follows the tokenizer.json pattern as written, cuts it this way.
TEST(PreTokenizer, Gpt4oSplitsAtCaseChangesAndKeepsContractionsWithTheirWord) {
  EXPECT_EQ(words("gpt-4o", "HelloWorld isn't JSONParser 12345 a/b//\nOK  x"),
            (Words{"Hello", "World", " isn't", " JSONParser", " ", "123", "45", " a", "/b", "//\n",
                   "OK", " ", " x"}));
  EXPECT_EQ(PreTokenizer::variant_of_split("no such regex"), "");
}

TEST(PreTokenizer, LaterRegexesRecutEarlierPieces) {
  // starcoder: digits are cut out first, so " 12" cannot stay one word.
  EXPECT_EQ(words("starcoder", "a 12"), (Words{"a", " ", "1", "2"}));
  // falcon: punctuation runs first, then GPT-2, then three-digit groups.
  EXPECT_EQ(words("falcon", "x, 1234"), (Words{"x", ",", " ", "123", "4"}));
}

TEST(PreTokenizer, DeepSeekCutsLettersPunctuationAndCjk) {
  EXPECT_EQ(words("deepseek-coder", "ab, \xE6\x97\xA5\xE6\x9C\xAC 7"),
            (Words{"ab", ",", " ", "\xE6\x97\xA5\xE6\x9C\xAC", " ", "7"}));
  EXPECT_EQ(words("deepseek-llm", "Hi.\nyo  "), (Words{"Hi", ".", "\n", "yo", "  "}));
}

TEST(PreTokenizer, ConcatenatedWordsGiveBackTheText) {
  const std::string text = "\tmixed 12.5% caf\xC3\xA9   \xE2\x9C\x85\n\n  x";
  for (const char* variant : {"default", "gpt-2", "llama-bpe", "qwen2", "gpt-4o", "deepseek-llm",
                              "deepseek-coder", "falcon", "starcoder", "refact", "mpt"}) {
    std::string joined;
    for (const std::string& word : words(variant, text)) joined += word;
    EXPECT_EQ(joined, text) << variant;
  }
}

TEST(PreTokenizer, RejectsUnknownVariants) {
  try {
    PreTokenizer("no-such-pre");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.category(), ErrorCategory::kUnsupported);
    EXPECT_NE(std::string(error.what()).find("no-such-pre"), std::string::npos);
  }
}

}  // namespace
}  // namespace baton
