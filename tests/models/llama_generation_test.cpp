#include <gtest/gtest.h>

#include "baton/llm.h"
#include "tests/models/greedy_params.h"
#include "tests/models/reference_cases.h"
#include "tests/test_data.h"

namespace baton {
namespace {

using testing::greedy;

std::vector<int32_t> all_ids(const GenerationOutput& out) {
  std::vector<int32_t> ids = out.prompt_tokens;
  ids.insert(ids.end(), out.tokens.begin(), out.tokens.end());
  return ids;
}

class Stories260K : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::shared_model("stories260K.gguf");
    BATON_REQUIRE_SHARED_FILE(path_);
  }
  LLM open(int32_t threads = 2) const {
    return LLM(LLMOptions{.model = path_.string(), .backend = "cpu", .threads = threads});
  }
  std::filesystem::path path_;
};

TEST_F(Stories260K, GreedyFromEmptyPromptMatchesLlama2cRunC) {
  const testing::ReferenceCase ref = testing::reference_case("doc_greedy_empty_prompt");
  LLM llm = open();
  const GenerationOutput out = llm.generate("", greedy(256));
  EXPECT_EQ(all_ids(out), ref.token_ids);
  EXPECT_EQ(out.text + "\n", ref.expected) << "run.c ends its output with a newline";
  EXPECT_EQ(out.finish_reason, FinishReason::kLength);
}

TEST_F(Stories260K, GreedyWithPromptMatchesLlama2cRunC) {
  // run.c's -n counts the prompt's positions too: 64 steps = 4 prompt tokens + 60 new ones.
  const testing::ReferenceCase ref = testing::reference_case("greedy_once_upon_a_time_64");
  LLM llm = open();
  const GenerationOutput out = llm.generate("Once upon a time", greedy(60));
  EXPECT_EQ(all_ids(out), ref.token_ids);
  EXPECT_EQ("Once upon a time" + out.text, ref.expected);
}

TEST_F(Stories260K, OneAndTwoThreadsGenerateTheSameTokens) {
  LLM one = open(1);
  LLM two = open(2);
  EXPECT_EQ(one.generate("Lily and Ben", greedy(40)).tokens,
            two.generate("Lily and Ben", greedy(40)).tokens);
}

TEST_F(Stories260K, SeededSamplingIsReproducible) {
  LLM llm = open();
  GenerationParams p;
  p.max_tokens = 40;
  p.sampling.seed = 7;
  const GenerationOutput a = llm.generate("Once upon a time", p);
  const GenerationOutput b = llm.generate("Once upon a time", p);
  EXPECT_EQ(a.tokens, b.tokens);
  p.sampling.seed = 8;
  EXPECT_NE(llm.generate("Once upon a time", p).tokens, a.tokens);
}

TEST_F(Stories260K, BatchOfPromptsEqualsPromptsAlone) {
  LLM llm = open();
  const std::vector<std::string> prompts = {"Once upon a time", "The cat", "Tom had a big"};
  const std::vector<GenerationOutput> batch = llm.generate(prompts, greedy(20));
  ASSERT_EQ(batch.size(), prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(batch[i].tokens, llm.generate(prompts[i], greedy(20)).tokens) << prompts[i];
  }
}

TEST_F(Stories260K, PromptGivenAsTokenIdsEqualsTheSameText) {
  LLM llm = open();
  const std::vector<GenerationOutput> out = llm.generate(
      std::vector<Request>{{.params = greedy(16), .prompt_tokens = {1, 403, 407, 261, 378}}});
  EXPECT_EQ(out[0].tokens, llm.generate("Once upon a time", greedy(16)).tokens);
  EXPECT_EQ(out[0].text, llm.generate("Once upon a time", greedy(16)).text);
}

TEST_F(Stories260K, StreamedPiecesConcatenateToTheText) {
  LLM llm = open();
  std::string streamed;
  const GenerationOutput out =
      llm.generate("Once upon a time", greedy(30), [&](std::string_view s) {
        streamed += s;
        return true;
      });
  EXPECT_EQ(streamed, out.text);
}

TEST_F(Stories260K, CallbackCanStopGeneration) {
  LLM llm = open();
  int pieces = 0;
  const GenerationOutput out =
      llm.generate("Once upon a time", greedy(50), [&](std::string_view) { return ++pieces < 3; });
  EXPECT_EQ(out.finish_reason, FinishReason::kAborted);
  EXPECT_LT(out.tokens.size(), 50u);
}

TEST_F(Stories260K, StopStringEndsTheTextBeforeIt) {
  LLM llm = open();
  GenerationParams p = greedy(40);
  p.stop = {"named", "zebra"};
  std::string streamed;
  const GenerationOutput out = llm.generate("Once upon a time", p, [&](std::string_view s) {
    streamed += s;
    return true;
  });
  EXPECT_EQ(out.text, ", there was a little girl ");
  EXPECT_EQ(streamed, out.text) << "no part of the stop string reaches the stream";
  EXPECT_EQ(out.finish_reason, FinishReason::kStop);
}

TEST_F(Stories260K, StopTokenIdEndsGenerationWithoutItsText) {
  LLM llm = open();
  GenerationParams p = greedy(40);
  p.stop_token_ids = {426};  // "."
  const GenerationOutput out = llm.generate("Once upon a time", p);
  EXPECT_EQ(out.text, ", there was a little girl named Lily");
  EXPECT_EQ(out.tokens.back(), 426);
  EXPECT_EQ(out.finish_reason, FinishReason::kStop);
}

TEST_F(Stories260K, GenerationStopsAtTheContextEnd) {
  LLM llm(LLMOptions{.model = path_.string(), .backend = "cpu", .threads = 2, .context_size = 16});
  const GenerationOutput out = llm.generate("Once upon a time", greedy(100));
  EXPECT_EQ(out.prompt_tokens.size() + out.tokens.size(), 16u);
  EXPECT_EQ(out.finish_reason, FinishReason::kLength);
}

TEST_F(Stories260K, ContinuationContainsTheKnownGreedyPhrase) {
  // samyfodil/jitllm's check on ggml-org's copy of this model (see stories260K_reference.json).
  LLM llm = open();
  EXPECT_NE(
      llm.generate("Once upon a time", greedy(16)).text.find("there was a little girl named Lily"),
      std::string::npos);
}

}  // namespace
}  // namespace baton
