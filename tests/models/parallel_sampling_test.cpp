#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "baton/error.h"
#include "baton/llm.h"
#include "tests/models/demo_f32.h"
#include "tests/test_data.h"

namespace baton {
namespace {

constexpr const char* kPrompt =
    "And it came to pass, when the king heard the words of the law, that he";

GenerationParams samples(int32_t n, uint64_t seed, int32_t max_tokens = 24) {
  GenerationParams p;
  p.n = n;
  p.sampling.seed = seed;
  p.sampling.temperature = 1.0f;
  p.max_tokens = max_tokens;
  p.ignore_eos = true;
  return p;
}

std::vector<std::vector<int32_t>> tokens_of(const GenerationOutput& out) {
  std::vector<std::vector<int32_t>> tokens;
  for (const Completion& c : out.completions) tokens.push_back(c.tokens);
  return tokens;
}

class ParallelSampling : public ::testing::Test {
 protected:
  static LLMOptions options() {
    // f32: a request's tokens must not depend on what shares its steps (demo_f32.h).
    return LLMOptions{.model = testing::demo_model_f32().string(), .backend = "cpu", .threads = 2};
  }
};

TEST_F(ParallelSampling, FourSeededSamplesAreDistinctAndReproducible) {
  LLM llm(options());
  const GenerationOutput a = llm.generate(kPrompt, samples(4, 11));
  ASSERT_EQ(a.completions.size(), 4u);
  const std::vector<std::vector<int32_t>> distinct = tokens_of(a);
  EXPECT_EQ(std::set(distinct.begin(), distinct.end()).size(), 4u);
  EXPECT_EQ(a.tokens, a.completions[0].tokens);
  EXPECT_EQ(a.text, a.completions[0].text);
  EXPECT_EQ(tokens_of(llm.generate(kPrompt, samples(4, 11))), tokens_of(a)) << "same seed";
  EXPECT_NE(tokens_of(llm.generate(kPrompt, samples(4, 12))), tokens_of(a)) << "other seed";
  // Sample 0 keeps the request's seed: it is what n=1 gives.
  EXPECT_EQ(llm.generate(kPrompt, samples(1, 11)).tokens, a.tokens);
  const EngineStats stats = llm.stats();
  EXPECT_EQ(stats.kv_blocks_free, stats.kv_blocks_total) << "every block returns to the pool";
}

TEST_F(ParallelSampling, ThePromptIsComputedOnceForAllSamples) {
  LLMOptions o = options();
  o.prefix_caching = false;
  LLM llm(o);
  const GenerationParams p = samples(4, 5, 16);
  const GenerationOutput out = llm.generate(kPrompt, p);
  const EngineStats s = llm.stats();
  // One prefill of the prompt, then each sample runs its tokens but the last.
  EXPECT_EQ(s.computed_tokens,
            static_cast<int64_t>(out.prompt_tokens.size()) + 4 * (p.max_tokens - 1));
  EXPECT_EQ(s.generated_tokens, 4 * p.max_tokens);
}

TEST_F(ParallelSampling, PrefixCachingAndPoolPressureDoNotChangeSamples) {
  LLM reference(options());
  LLMOptions uncached = options();
  uncached.prefix_caching = false;
  LLMOptions tiny = options();
  tiny.kv_block_size = 4;
  // 20 blocks of 4 tokens (8 KiB a token): four samples plus more prompts preempt.
  tiny.kv_cache_mib = 0.625;
  LLM without_cache(uncached), small_pool(tiny);
  const std::vector<std::string> prompts = {kPrompt, "Jesus wept", "Amen"};
  const GenerationParams p = samples(4, 21, 20);
  const std::vector<GenerationOutput> expected = reference.generate(prompts, p);
  const std::vector<GenerationOutput> b = without_cache.generate(prompts, p);
  const std::vector<GenerationOutput> c = small_pool.generate(prompts, p);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(tokens_of(b[i]), tokens_of(expected[i])) << prompts[i];
    EXPECT_EQ(tokens_of(c[i]), tokens_of(expected[i])) << prompts[i];
  }
  EXPECT_GT(small_pool.stats().preemptions, 0) << "the pool was meant to run dry";
  for (LLM* llm : {&reference, &without_cache, &small_pool}) {
    EXPECT_EQ(llm->stats().kv_blocks_free, llm->stats().kv_blocks_total);
  }
}

TEST_F(ParallelSampling, BestOfReturnsTheLikeliestSamples) {
  LLM llm(options());
  const GenerationOutput all = llm.generate(kPrompt, samples(4, 3));
  GenerationParams p = samples(2, 3);
  p.best_of = 4;
  const GenerationOutput best = llm.generate(kPrompt, p);
  ASSERT_EQ(best.completions.size(), 2u);
  std::vector<Completion> ranked = all.completions;
  std::stable_sort(ranked.begin(), ranked.end(), [](const Completion& a, const Completion& b) {
    return a.cumulative_logprob > b.cumulative_logprob;
  });
  EXPECT_EQ(best.completions[0].tokens, ranked[0].tokens);
  EXPECT_EQ(best.completions[1].tokens, ranked[1].tokens);
  EXPECT_GE(best.completions[0].cumulative_logprob, best.completions[1].cumulative_logprob);
}

TEST_F(ParallelSampling, LogprobsDescribeTheModelDistribution) {
  LLM llm(options());
  GenerationParams p = samples(2, 9, 12);
  p.logprobs = 5;
  const GenerationOutput out = llm.generate(kPrompt, p);
  for (const Completion& c : out.completions) {
    ASSERT_EQ(c.logprobs.size(), c.tokens.size());
    double cumulative = 0;
    for (size_t i = 0; i < c.tokens.size(); ++i) {
      const TokenLogprobs& t = c.logprobs[i];
      EXPECT_EQ(t.chosen.token, c.tokens[i]);
      EXPECT_LE(t.chosen.logprob, 0.0f);
      cumulative += t.chosen.logprob;
      ASSERT_EQ(t.top.size(), 5u);
      double mass = 0;
      for (size_t k = 0; k < t.top.size(); ++k) {
        EXPECT_LE(t.top[k].logprob, 0.0f);
        if (k > 0) {
          EXPECT_LE(t.top[k].logprob, t.top[k - 1].logprob) << "most likely first";
        }
        if (t.top[k].token == t.chosen.token) {
          EXPECT_EQ(t.top[k].logprob, t.chosen.logprob);
        }
        mass += std::exp(t.top[k].logprob);
      }
      EXPECT_LE(mass, 1.0 + 1e-5);
    }
    EXPECT_NEAR(c.cumulative_logprob, cumulative, 1e-3);
  }
}

TEST_F(ParallelSampling, StopStringsEndEachSampleOnItsOwn) {
  LLM llm(options());
  GenerationParams p = samples(4, 11, 40);
  p.stop = {"."};
  const GenerationOutput out = llm.generate(kPrompt, p);
  ASSERT_EQ(out.completions.size(), 4u);
  for (const Completion& c : out.completions) EXPECT_EQ(c.text.find('.'), std::string::npos);
  EXPECT_EQ(llm.stats().kv_blocks_free, llm.stats().kv_blocks_total);
}

TEST_F(ParallelSampling, BadCountsAreRejectedNamingTheField) {
  LLM llm(options());
  const auto message = [&](const GenerationParams& p) {
    try {
      llm.generate(kPrompt, p);
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  GenerationParams p = samples(0, 1);
  EXPECT_NE(message(p).find("n "), std::string::npos);
  p = samples(3, 1);
  p.best_of = 2;
  EXPECT_NE(message(p).find("best_of"), std::string::npos);
  p = samples(1, 1);
  p.logprobs = 21;
  EXPECT_NE(message(p).find("logprobs"), std::string::npos);
  p = samples(1, 1);
  p.use_beam_search = true;
  p.beam_width = 0;
  EXPECT_NE(message(p).find("beam_width"), std::string::npos);
  p = samples(2, 1);
  p.best_of = 4;
  EXPECT_THROW(llm.generate(kPrompt, p, [](std::string_view) { return true; }), Error)
      << "streaming cannot know which of best_of samples comes first";
  EXPECT_EQ(llm.stats().kv_blocks_free, llm.stats().kv_blocks_total);
}

}  // namespace
}  // namespace baton
