// The bundled demo model (assets/models, trained by tools/train_demo/) against what PyTorch
// computed for it at export time: the checkpoint went HF directory -> `baton convert` -> F16
// GGUF, so this checks the converter's tensor mapping and RoPE permutation, the SentencePiece
// vocabulary export and the forward pass end to end, on a file every clone has.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "baton/llm.h"
#include "baton/option_values.h"
#include "tests/test_data.h"

namespace baton {
namespace {

struct Reference {
  std::string prompt;
  std::vector<int32_t> prompt_ids;
  std::vector<double> last_logits;
  std::vector<int32_t> greedy_ids;
};

Reference load_reference() {
  std::ifstream in(testing::demo_model_reference());
  const nlohmann::json doc = nlohmann::json::parse(in);
  return {doc.at("prompt"), doc.at("prompt_ids"), doc.at("last_logits"), doc.at("greedy_ids")};
}

std::vector<double> log_softmax(const std::vector<double>& logits) {
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (double v : logits) sum += std::exp(v - max);
  std::vector<double> out;
  for (double v : logits) out.push_back(v - max - std::log(sum));
  return out;
}

class DemoModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    llm_ = new LLM(LLMOptions{.model = testing::demo_model().string(), .threads = 2});
  }
  static void TearDownTestSuite() { delete llm_; }
  static LLM* llm_;
};
LLM* DemoModel::llm_ = nullptr;

TEST_F(DemoModel, TokenizesThePromptAsSentencePieceDid) {
  const Reference ref = load_reference();
  EXPECT_EQ(llm_->tokenize(ref.prompt, /*add_special=*/true, /*parse_special=*/false),
            ref.prompt_ids);
}

// F16 weights against PyTorch's F32 forward: log-probabilities agree within 0.02 nats.
TEST_F(DemoModel, FirstTokenLogprobsMatchPyTorch) {
  const Reference ref = load_reference();
  GenerationParams params;
  params.max_tokens = 1;
  params.sampling.temperature = 0;
  params.logprobs = 20;
  const GenerationOutput out = llm_->generate(ref.prompt, params);
  ASSERT_EQ(out.completions.at(0).logprobs.size(), 1u);
  const std::vector<double> expected = log_softmax(ref.last_logits);
  for (const TokenLogprob& top : out.completions[0].logprobs[0].top) {
    EXPECT_NEAR(top.logprob, expected.at(top.token), 0.02) << "token " << top.token;
  }
}

// The f16, bf16, q8_0, int8 and fp8 KV caches, end to end: each greedy token's log-probability
// stays close to the f32 cache's along the f32 cache's own continuation (forced by
// prompt_tokens): within 0.02 nats for the types with 8 significant bits or more, 0.1 for fp8
// (4 bits).
TEST(DemoModelKvCache, QuantizedCachesScoreTheContinuationAsF32Does) {
  const Reference ref = load_reference();
  GenerationParams params;
  params.max_tokens = 48;
  params.sampling.temperature = 0;
  params.ignore_eos = true;
  LLM f32(LLMOptions{.model = testing::demo_model().string(), .threads = 2});
  const std::vector<int32_t> prompt = f32.tokenize(ref.prompt, true, false);
  const GenerationOutput greedy = f32.generate(ref.prompt, params);
  // Each token of that continuation scored given the ones before it, one request a token: prefix
  // caching reads the earlier tokens' K/V back from the cache in `dtype`, as decode does.
  const auto scores = [&](const std::string& dtype) {
    LLM llm(LLMOptions{.model = testing::demo_model().string(),
                       .threads = 2,
                       .kv_block_size = 16,
                       .kv_cache_dtype = parse_option_value<KvCacheType>("kv_cache_dtype", dtype)});
    std::vector<double> out;
    std::vector<int32_t> context = prompt;
    for (int32_t token : greedy.tokens) {
      GenerationParams one = params;
      one.max_tokens = 1;
      one.logprobs = 20;
      const GenerationOutput o =
          llm.generate(std::vector<Request>{{.params = one, .prompt_tokens = context}}).front();
      double logprob = -100;
      for (const TokenLogprob& top : o.completions.at(0).logprobs.at(0).top) {
        if (top.token == token) logprob = top.logprob;
      }
      out.push_back(logprob);
      context.push_back(token);
    }
    return out;
  };
  const std::vector<double> reference = scores("f32");
  const std::pair<std::string, double> kCaches[] = {
      {"f16", 0.02}, {"bf16", 0.02}, {"q8_0", 0.02}, {"int8_scaled", 0.02}, {"fp8_e4m3", 0.1}};
  for (const auto& [dtype, tolerance] : kCaches) {
    const std::vector<double> got = scores(dtype);
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], reference[i], tolerance) << dtype << " cache, token " << i;
      worst = std::max(worst, std::abs(got[i] - reference[i]));
    }
    std::printf("%s cache: largest logprob difference %.4f nats\n", dtype.c_str(), worst);
  }
}

TEST_F(DemoModel, GreedyContinuationMatchesPyTorch) {
  const Reference ref = load_reference();
  GenerationParams params;
  params.max_tokens = static_cast<int32_t>(ref.greedy_ids.size());
  params.sampling.temperature = 0;
  params.ignore_eos = true;
  EXPECT_EQ(llm_->generate(ref.prompt, params).tokens, ref.greedy_ids);
}

}  // namespace
}  // namespace baton
