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
  // The last of `tokens`, after a prompt of `prompt` of them.
  static SampledToken sampled(const std::vector<int32_t>& tokens, int32_t prompt,
                              bool grammar_finished = false) {
    const int32_t length = static_cast<int32_t>(tokens.size());
    return {.token = tokens.back(),
            .generated = length - prompt,
            .length = length,
            .grammar_finished = grammar_finished};
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
  EXPECT_EQ(finish_after(params, *tokenizer_, sampled({5, 6, 100}, 2), 64), std::nullopt);
  EXPECT_EQ(finish_after(params, *tokenizer_, sampled({5, 6, eos_}, 2), 64), FinishReason::kStop);
  EXPECT_EQ(finish_after(params, *tokenizer_, sampled({5, 6, 100, 101, 102}, 2), 64),
            FinishReason::kLength);
  EXPECT_EQ(finish_after(params, *tokenizer_, sampled({5, 6, 100}, 2), 3), FinishReason::kLength)
      << "the context is full";
  EXPECT_EQ(finish_after(params, *tokenizer_, sampled({5, 6, 100}, 2, true), 64),
            FinishReason::kStop)
      << "the grammar has ended";
}

}  // namespace
}  // namespace baton
