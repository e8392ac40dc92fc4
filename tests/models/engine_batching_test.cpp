#include <gtest/gtest.h>

#include "baton/error.h"
#include "baton/llm.h"
#include "tests/models/greedy_params.h"
#include "tests/test_data.h"

namespace baton {
namespace {

// 16 prompts of different lengths in the style stories260K was trained on.
const std::vector<std::string> kPrompts = {
    "Once upon a time",
    "Lily",
    "The little dog ran to the park and saw a big red ball",
    "Tom and Sue",
    "One day, a girl named Mia went to the store with her mom. She wanted",
    "The sun",
    "Ben had a toy car",
    "There was a cat who liked to sleep in the warm sun all day long",
    "Sam",
    "A bird",
    "The old man smiled",
    "Max found a stick in the garden and",
    "It was a cold day",
    "Anna liked to paint pictures of flowers, trees and the blue sky",
    "The frog jumped",
    "Once there was a big tree in the forest. Many animals lived in it. One day",
};

using testing::greedy;

class EngineBatching : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::shared_model("stories260K.gguf");
    BATON_REQUIRE_SHARED_FILE(path_);
  }
  LLMOptions options() const {
    return LLMOptions{.model = path_.string(), .backend = "cpu", .threads = 2};
  }
  std::vector<std::vector<int32_t>> alone(int32_t max_tokens) const {
    LLM llm(options());
    std::vector<std::vector<int32_t>> out;
    for (const std::string& p : kPrompts) out.push_back(llm.generate(p, greedy(max_tokens)).tokens);
    return out;
  }
  static std::vector<std::vector<int32_t>> tokens_of(const std::vector<GenerationOutput>& outs) {
    std::vector<std::vector<int32_t>> tokens;
    for (const GenerationOutput& o : outs) tokens.push_back(o.tokens);
    return tokens;
  }
  std::filesystem::path path_;
};

TEST_F(EngineBatching, BatchedOutputsEqualEachPromptAlone) {
  LLM llm(options());
  const auto batched = llm.generate(kPrompts, greedy(48));
  EXPECT_EQ(tokens_of(batched), alone(48));
  const EngineStats stats = llm.stats();
  EXPECT_LT(stats.steps, 16 * 48) << "requests must share steps";
  EXPECT_EQ(stats.kv_blocks_free, stats.kv_blocks_total) << "every block returns to the pool";
}

TEST_F(EngineBatching, PreemptionUnderATinyPoolKeepsOutputsUnchanged) {
  LLMOptions o = options();
  o.kv_block_size = 4;
  // stories260K stores 5 layers x 4 kv heads x 8 dims x K and V in f32: 1280 bytes per token,
  // so 0.1 MiB holds 80 tokens (20 blocks), far less than 16 prompts plus 32 tokens each; the
  // longest prompt (39 tokens) plus 32 still fits on its own.
  o.kv_cache_mib = 0.1;
  LLM llm(o);
  const auto batched = llm.generate(kPrompts, greedy(32));
  EXPECT_GT(llm.stats().preemptions, 0) << "the pool was meant to run dry";
  EXPECT_EQ(tokens_of(batched), alone(32));
}

TEST_F(EngineBatching, ChunkedPrefillUnderATinyTokenBudgetKeepsOutputsUnchanged) {
  LLMOptions o = options();
  o.max_batch_tokens = 5;  // long prompts take several steps, riding along with decodes
  LLM llm(o);
  EXPECT_EQ(tokens_of(llm.generate(kPrompts, greedy(24))), alone(24));
}

TEST_F(EngineBatching, SharedSystemPromptIsComputedOnce) {
  std::string system = "You are a storyteller.";
  while (system.size() < 700)
    system += " Tell a short, kind story about friends who help each other.";
  std::vector<std::string> prompts;
  for (const char* name : {"Lily", "Ben", "Sue", "Tom", "Mia", "Max", "Sam", "Anna"}) {
    prompts.push_back(system + " Once upon a time, " + name);
  }
  LLMOptions cached = options();
  cached.max_seqs = 1;  // one at a time, so each request can reuse the blocks of the last
  LLMOptions uncached = cached;
  uncached.prefix_caching = false;
  LLM with_cache(cached), without_cache(uncached);
  const auto a = with_cache.generate(prompts, greedy(16));
  const auto b = without_cache.generate(prompts, greedy(16));
  EXPECT_EQ(tokens_of(a), tokens_of(b));
  const int64_t system_tokens = static_cast<int64_t>(a[0].prompt_tokens.size()) - 4;
  ASSERT_GT(system_tokens, 200);
  const EngineStats s = with_cache.stats();
  const EngineStats u = without_cache.stats();
  // Without the cache every request computes its whole prompt; with it, the shared full blocks
  // are computed by the first request only.
  EXPECT_GE(u.computed_tokens - s.computed_tokens, 7 * (system_tokens - 16));
  EXPECT_GE(s.prefix_hit_tokens, 7 * (system_tokens - 16));
  EXPECT_EQ(u.prefix_hit_tokens, 0);
}

TEST_F(EngineBatching, OversizedPromptInABatchIsAnErrorNotACrash) {
  LLMOptions o = options();
  o.context_size = 16;
  LLM llm(o);
  EXPECT_THROW(llm.generate({"Lily", kPrompts.back()}, greedy(4)), Error);
  EXPECT_EQ(llm.generate("Lily", greedy(4)).tokens.size(), 4u) << "the engine still serves";
}

}  // namespace
}  // namespace baton
