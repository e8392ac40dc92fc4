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

// llama2.c's stories260K from ../shared, for the checks against run.c's reference outputs.
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

TEST_F(Stories260K, ContinuationContainsTheKnownGreedyPhrase) {
  // samyfodil/jitllm's check on ggml-org's copy of this model (see stories260K_reference.json).
  LLM llm = open();
  EXPECT_NE(
      llm.generate("Once upon a time", greedy(16)).text.find("there was a little girl named Lily"),
      std::string::npos);
}

// The bundled demo model, for the properties that hold for any model.
class DemoGeneration : public ::testing::Test {
 protected:
  static LLM open(int32_t threads = 2, int32_t context_size = 0) {
    return LLM(LLMOptions{.model = testing::demo_model().string(),
                          .backend = "cpu",
                          .threads = threads,
                          .context_size = context_size});
  }
};

TEST_F(DemoGeneration, OneAndTwoThreadsGenerateTheSameTokens) {
  LLM one = open(1);
  LLM two = open(2);
  EXPECT_EQ(one.generate("And God said", greedy(40)).tokens,
            two.generate("And God said", greedy(40)).tokens);
}

TEST_F(DemoGeneration, SeededSamplingIsReproducible) {
  LLM llm = open();
  GenerationParams p;
  p.max_tokens = 40;
  p.sampling.seed = 7;
  const GenerationOutput a = llm.generate("In the beginning", p);
  const GenerationOutput b = llm.generate("In the beginning", p);
  EXPECT_EQ(a.tokens, b.tokens);
  p.sampling.seed = 8;
  EXPECT_NE(llm.generate("In the beginning", p).tokens, a.tokens);
}

TEST_F(DemoGeneration, BatchOfPromptsEqualsPromptsAlone) {
  LLM llm = open();
  const std::vector<std::string> prompts = {"In the beginning", "And God said", "Jesus wept"};
  const std::vector<GenerationOutput> batch = llm.generate(prompts, greedy(20));
  ASSERT_EQ(batch.size(), prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(batch[i].tokens, llm.generate(prompts[i], greedy(20)).tokens) << prompts[i];
  }
}

TEST_F(DemoGeneration, PromptGivenAsTokenIdsEqualsTheSameText) {
  LLM llm = open();
  // "In the beginning" as SentencePiece encodes it (assets/models/kjv-7m-reference.json).
  const std::vector<GenerationOutput> out = llm.generate(
      std::vector<Request>{{.params = greedy(16), .prompt_tokens = {1, 1038, 261, 1781, 1232}}});
  EXPECT_EQ(out[0].tokens, llm.generate("In the beginning", greedy(16)).tokens);
  EXPECT_EQ(out[0].text, llm.generate("In the beginning", greedy(16)).text);
}

TEST_F(DemoGeneration, StreamedPiecesConcatenateToTheText) {
  LLM llm = open();
  std::string streamed;
  const GenerationOutput out =
      llm.generate("In the beginning", greedy(30), [&](std::string_view s) {
        streamed += s;
        return true;
      });
  EXPECT_EQ(streamed, out.text);
}

TEST_F(DemoGeneration, CallbackCanStopGeneration) {
  LLM llm = open();
  int pieces = 0;
  const GenerationOutput out =
      llm.generate("In the beginning", greedy(50), [&](std::string_view) { return ++pieces < 3; });
  EXPECT_EQ(out.finish_reason, FinishReason::kAborted);
  EXPECT_LT(out.tokens.size(), 50u);
}

// The greedy continuation starts " of the LORD, and": " LORD" and "," are two tokens, so the stop
// string begins inside one token and ends in the next.
TEST_F(DemoGeneration, StopStringEndsTheTextBeforeIt) {
  LLM llm = open();
  GenerationParams p = greedy(40);
  p.stop = {"ORD,", "zebra"};
  std::string streamed;
  const GenerationOutput out = llm.generate("In the beginning", p, [&](std::string_view s) {
    streamed += s;
    return true;
  });
  EXPECT_EQ(out.text, " of the L");
  EXPECT_EQ(streamed, out.text) << "no part of the stop string reaches the stream";
  EXPECT_EQ(out.finish_reason, FinishReason::kStop);
}

TEST_F(DemoGeneration, StopTokenIdEndsGenerationWithoutItsText) {
  LLM llm = open();
  GenerationParams p = greedy(40);
  p.stop_token_ids = {2001};  // ","
  const GenerationOutput out = llm.generate("In the beginning", p);
  EXPECT_EQ(out.text, " of the LORD");
  EXPECT_EQ(out.tokens.back(), 2001);
  EXPECT_EQ(out.finish_reason, FinishReason::kStop);
}

TEST_F(DemoGeneration, GenerationStopsAtTheContextEnd) {
  LLM small = open(2, 16);
  GenerationOutput out = small.generate("In the beginning", greedy(100));
  EXPECT_EQ(out.prompt_tokens.size() + out.tokens.size(), 16u);
  EXPECT_EQ(out.finish_reason, FinishReason::kLength);
  // Without a context size the model's trained context, 256 tokens, is the limit.
  LLM full = open();
  GenerationParams p = greedy(300);
  p.ignore_eos = true;
  out = full.generate("In the beginning", p);
  EXPECT_EQ(out.prompt_tokens.size() + out.tokens.size(), 256u);
  EXPECT_EQ(out.finish_reason, FinishReason::kLength);
}

}  // namespace
}  // namespace baton
