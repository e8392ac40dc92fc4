#include "core/serving/engine/stop_check.h"

#include <gtest/gtest.h>

#include <memory>

#include "core/formats/gguf/gguf_file.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "tests/test_data.h"

namespace baton {
namespace {

class StopCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    tokenizer_ =
        Tokenizer::create(vocabulary_from_gguf(gguf::GgufFile::open(testing::demo_model())));
    eos_ = tokenizer_->eos();
  }
  Sequence sequence(std::vector<int32_t> tokens, int32_t prompt) {
    Sequence s;
    s.tokens = std::move(tokens);
    s.prompt_length = prompt;
    return s;
  }
  std::unique_ptr<Tokenizer> tokenizer_;
  int32_t eos_ = -1;
};

TEST_F(StopCheck, EndOfTextStopsUnlessIgnoredAndStopIdsAlwaysDo) {
  GenerationParams params;
  params.stop_token_ids = {77};
  EXPECT_TRUE(is_stop_token(params, *tokenizer_, eos_));
  EXPECT_TRUE(is_stop_token(params, *tokenizer_, 77));
  EXPECT_FALSE(is_stop_token(params, *tokenizer_, 78));
  params.ignore_eos = true;
  EXPECT_FALSE(is_stop_token(params, *tokenizer_, eos_));
  EXPECT_TRUE(is_stop_token(params, *tokenizer_, 77));
}

TEST_F(StopCheck, ASampleEndsAtAStopTokenItsGrammarsEndItsLimitOrAFullContext) {
  GenerationParams params;
  params.max_tokens = 3;
  EXPECT_EQ(finish_after(params, *tokenizer_, sequence({5, 6, 100}, 2), false, 64), std::nullopt);
  EXPECT_EQ(finish_after(params, *tokenizer_, sequence({5, 6, eos_}, 2), false, 64),
            FinishReason::kStop);
  EXPECT_EQ(finish_after(params, *tokenizer_, sequence({5, 6, 100, 101, 102}, 2), false, 64),
            FinishReason::kLength);
  EXPECT_EQ(finish_after(params, *tokenizer_, sequence({5, 6, 100}, 2), false, 3),
            FinishReason::kLength)
      << "the context is full";
  EXPECT_EQ(finish_after(params, *tokenizer_, sequence({5, 6, 100}, 2), true, 64),
            FinishReason::kStop)
      << "the grammar has ended";
}

}  // namespace
}  // namespace baton
