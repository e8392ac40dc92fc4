// The 512-token SentencePiece vocabulary of stories260K.gguf, checked against llama2.c.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "core/tokenizer/tokenizer.h"
#include "tests/core/tokenizer/tokenizer_test_util.h"
#include "tests/test_data.h"

namespace baton {
namespace {

class StoriesTokenizer : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto path = testing::shared_model("stories260K.gguf");
    BATON_REQUIRE_SHARED_FILE(path);
    tokenizer_ = testing::load_tokenizer(path);
  }
  std::unique_ptr<Tokenizer> tokenizer_;
};

TEST_F(StoriesTokenizer, ReadsSpecialIdsAndFlagsFromMetadata) {
  EXPECT_EQ(tokenizer_->vocab_size(), 512);
  EXPECT_EQ(tokenizer_->bos(), 1);
  EXPECT_EQ(tokenizer_->eos(), 2);
  EXPECT_EQ(tokenizer_->vocabulary().unk, 0);
  // 0xFFFFFFFF in the file means "no separator".
  EXPECT_EQ(tokenizer_->vocabulary().sep, -1);
  EXPECT_TRUE(tokenizer_->vocabulary().add_bos);
  EXPECT_TRUE(tokenizer_->is_end_of_generation(2));
  EXPECT_FALSE(tokenizer_->is_end_of_generation(1));
}

TEST_F(StoriesTokenizer, EncodesPromptLikeLlama2c) {
  EXPECT_EQ(tokenizer_->encode("Once upon a time", true, false),
            (std::vector<int32_t>{1, 403, 407, 261, 378}));
  EXPECT_EQ(tokenizer_->encode("Once upon a time", false, false),
            (std::vector<int32_t>{403, 407, 261, 378}));
  EXPECT_EQ(tokenizer_->encode("", true, false), (std::vector<int32_t>{1}));
  EXPECT_TRUE(tokenizer_->encode("", false, false).empty());
}

TEST_F(StoriesTokenizer, DecodesPiecesWithoutTheSpacePrefix) {
  EXPECT_EQ(tokenizer_->token_to_piece(403), " Once");
  EXPECT_EQ(tokenizer_->token_to_piece(1), "");
  EXPECT_EQ(tokenizer_->token_to_piece(1, true), "<s>");
  EXPECT_EQ(tokenizer_->token_to_piece(13), "\n");  // byte token <0x0A>
  const std::vector<int32_t> ids = {1, 403, 407, 261, 378};
  EXPECT_EQ(tokenizer_->decode(ids), "Once upon a time");
  EXPECT_EQ(tokenizer_->decode(ids, true), "<s> Once upon a time");
  EXPECT_THROW(tokenizer_->token_to_piece(512), Error);
}

TEST_F(StoriesTokenizer, RoundTripsTextThroughEncodeAndDecode) {
  for (const std::string text :
       {"Once upon a time, there was a little girl named Lily.", "Lily's mom said, \"Hi!\"\n",
        "  two leading spaces", "tabs\tand\nnewlines\n\n",
        "unicode: h\xC3\xA9llo \xE6\x97\xA5"
        "\xE6\x9C\xAC \xF0\x9F\x99\x82",
        "<s> is plain text here"}) {
    EXPECT_EQ(tokenizer_->decode(tokenizer_->encode(text, true, false)), text) << text;
  }
}

TEST_F(StoriesTokenizer, ParseSpecialTurnsTokenSpellingsIntoTokens) {
  const std::string text = "Hi</s><s>there";
  const std::vector<int32_t> parsed = tokenizer_->encode(text, false, true);
  const std::vector<int32_t> plain = tokenizer_->encode(text, false, false);
  ASSERT_GE(parsed.size(), 4u);
  EXPECT_EQ(std::count(parsed.begin(), parsed.end(), 2), 1);
  EXPECT_EQ(std::count(parsed.begin(), parsed.end(), 1), 1);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1), 0);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 2), 0);
  // Text after a special token gets its own space prefix, as in llama.cpp.
  EXPECT_EQ(tokenizer_->decode(parsed, true), "Hi</s><s> there");
  EXPECT_EQ(tokenizer_->decode(plain), text);
}

TEST_F(StoriesTokenizer, DecodesTheLlama2cGreedyReference) {
  const auto path = testing::shared_model("stories260K_reference.json");
  BATON_REQUIRE_SHARED_FILE(path);
  const auto reference = nlohmann::json::parse(testing::read_file(path));
  for (const auto& c : reference.at("cases")) {
    if (c.at("name") != "doc_greedy_empty_prompt") continue;
    const auto ids = c.at("token_ids").get<std::vector<int32_t>>();
    // run.c ends its output with a newline of its own.
    EXPECT_EQ(tokenizer_->decode(ids) + "\n", c.at("expected").get<std::string>());
    IncrementalDetokenizer detokenizer(*tokenizer_);
    std::string streamed;
    for (const int32_t id : ids) streamed += detokenizer.push(id);
    streamed += detokenizer.flush();
    EXPECT_EQ(streamed, tokenizer_->decode(ids));
    return;
  }
  FAIL() << "doc_greedy_empty_prompt not found in " << path;
}

}  // namespace
}  // namespace baton
