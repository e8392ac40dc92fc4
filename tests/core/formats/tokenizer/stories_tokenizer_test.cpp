// SentencePiece ("llama") vocabularies read from GGUF: the bundled demo model's 2048 tokens for
// what holds of any such vocabulary, and stories260K's 512 from ../shared against llama2.c.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "tests/core/formats/tokenizer/tokenizer_test_util.h"
#include "tests/test_data.h"

namespace baton {
namespace {

class DemoTokenizer : public ::testing::Test {
 protected:
  void SetUp() override { tokenizer_ = testing::load_tokenizer(testing::demo_model()); }
  std::unique_ptr<Tokenizer> tokenizer_;
};

TEST_F(DemoTokenizer, ReadsSpecialIdsAndFlagsFromMetadata) {
  EXPECT_EQ(tokenizer_->vocab_size(), 2048);
  EXPECT_EQ(tokenizer_->bos(), 1);
  EXPECT_EQ(tokenizer_->eos(), 2);
  EXPECT_EQ(tokenizer_->vocabulary().unk, 0);
  EXPECT_EQ(tokenizer_->vocabulary().sep, -1) << "the file has no separator";
  EXPECT_TRUE(tokenizer_->vocabulary().add_bos);
  EXPECT_FALSE(tokenizer_->vocabulary().add_eos);
  EXPECT_TRUE(tokenizer_->is_end_of_generation(2));
  EXPECT_FALSE(tokenizer_->is_end_of_generation(1));
}

// The ids SentencePiece gave when the model was exported (assets/models/kjv-7m-reference.json).
TEST_F(DemoTokenizer, EncodesThePromptAsSentencePieceDid) {
  const auto reference = nlohmann::json::parse(testing::read_file(testing::demo_model_reference()));
  const std::string prompt = reference.at("prompt");
  std::vector<int32_t> ids = reference.at("prompt_ids");
  EXPECT_EQ(tokenizer_->encode(prompt, true, false), ids);
  ids.erase(ids.begin());
  EXPECT_EQ(tokenizer_->encode(prompt, false, false), ids);
  EXPECT_EQ(tokenizer_->encode("", true, false), (std::vector<int32_t>{1}));
  EXPECT_TRUE(tokenizer_->encode("", false, false).empty());
}

// The greedy continuation's ids decode to the text SentencePiece gave at export, whole or streamed.
TEST_F(DemoTokenizer, DecodesTheGreedyReferenceAsSentencePieceDid) {
  const auto reference = nlohmann::json::parse(testing::read_file(testing::demo_model_reference()));
  const auto ids = reference.at("greedy_ids").get<std::vector<int32_t>>();
  EXPECT_EQ(tokenizer_->decode(ids), reference.at("greedy_text").get<std::string>());
  IncrementalDetokenizer detokenizer(*tokenizer_);
  std::string streamed;
  for (const int32_t id : ids) streamed += detokenizer.push(id);
  streamed += detokenizer.flush();
  EXPECT_EQ(streamed, tokenizer_->decode(ids));
}

TEST_F(DemoTokenizer, DecodesPiecesWithoutTheSpacePrefix) {
  EXPECT_EQ(tokenizer_->token_to_piece(1038), " In");
  EXPECT_EQ(tokenizer_->token_to_piece(1), "");
  EXPECT_EQ(tokenizer_->token_to_piece(1, true), "<s>");
  EXPECT_EQ(tokenizer_->token_to_piece(13), "\n");  // byte token <0x0A>
  const std::vector<int32_t> ids = {1, 1038, 261, 1781, 1232};
  EXPECT_EQ(tokenizer_->decode(ids), "In the beginning");
  EXPECT_EQ(tokenizer_->decode(ids, true), "<s> In the beginning");
  EXPECT_THROW(tokenizer_->token_to_piece(2048), Error);
}

TEST_F(DemoTokenizer, RoundTripsTextThroughEncodeAndDecode) {
  for (const std::string text :
       {"In the beginning God created the heaven and the earth.", "Jesus said, \"Follow me.\"\n",
        "  two leading spaces", "tabs\tand\nnewlines\n\n",
        "unicode: h\xC3\xA9llo \xE6\x97\xA5"
        "\xE6\x9C\xAC \xF0\x9F\x99\x82",
        "<s> is plain text here"}) {
    EXPECT_EQ(tokenizer_->decode(tokenizer_->encode(text, true, false)), text) << text;
  }
}

TEST_F(DemoTokenizer, ParseSpecialTurnsTokenSpellingsIntoTokens) {
  const std::string text = "Amen</s><s>Behold";
  const std::vector<int32_t> parsed = tokenizer_->encode(text, false, true);
  const std::vector<int32_t> plain = tokenizer_->encode(text, false, false);
  ASSERT_GE(parsed.size(), 4u);
  EXPECT_EQ(std::count(parsed.begin(), parsed.end(), 2), 1);
  EXPECT_EQ(std::count(parsed.begin(), parsed.end(), 1), 1);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1), 0);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 2), 0);
  // Text after a special token gets its own space prefix, as in llama.cpp.
  EXPECT_EQ(tokenizer_->decode(parsed, true), "Amen</s><s> Behold");
  EXPECT_EQ(tokenizer_->decode(plain), text);
}

// llama2.c's stories260K from ../shared, against what llama2.c's run.c printed for it.
class StoriesTokenizer : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto path = testing::shared_model("stories260K.gguf");
    BATON_REQUIRE_SHARED_FILE(path);
    tokenizer_ = testing::load_tokenizer(path);
  }
  std::unique_ptr<Tokenizer> tokenizer_;
};

TEST_F(StoriesTokenizer, EncodesPromptLikeLlama2c) {
  EXPECT_EQ(tokenizer_->encode("Once upon a time", true, false),
            (std::vector<int32_t>{1, 403, 407, 261, 378}));
  EXPECT_EQ(tokenizer_->encode("Once upon a time", false, false),
            (std::vector<int32_t>{403, 407, 261, 378}));
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
