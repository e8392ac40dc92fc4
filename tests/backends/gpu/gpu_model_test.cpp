// Whole-model checks: stories260K (from ../shared) and the bundled demo model on the backend
// under test generate exactly the CPU backend's greedy tokens, alone and in batches that make
// the engine mix prefill chunks with decodes, reuse cached prefixes and preempt sequences.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/llm.h"
#include "tests/backends/gpu/gpu_test_util.h"
#include "tests/models/greedy_params.h"
#include "tests/test_data.h"

namespace baton {
namespace {

using testing::greedy;

class GpuStories260K : public testing::BackendTest {
 protected:
  // The device first: on a host without one the skip names that, with or without ../shared.
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped()) return;
    path_ = testing::shared_model("stories260K.gguf");
    BATON_REQUIRE_SHARED_FILE(path_);
  }
  LLM open(const std::string& backend) const {
    return LLM(LLMOptions{.model = path_.string(), .backend = backend, .threads = 2});
  }
  std::filesystem::path path_;
};

TEST_F(GpuStories260K, Greedy64TokensEqualTheCpuBackend) {
  LLM cpu = open("cpu");
  LLM gpu = open(testing::gpu_backend_name());
  for (const char* prompt : {"", "Once upon a time"}) {
    const GenerationOutput expected = cpu.generate(prompt, greedy(64));
    const GenerationOutput actual = gpu.generate(prompt, greedy(64));
    EXPECT_EQ(actual.tokens, expected.tokens) << "prompt '" << prompt << "'";
    EXPECT_EQ(actual.text, expected.text) << "prompt '" << prompt << "'";
  }
}

TEST_F(GpuStories260K, BatchedPromptsEqualTheCpuBackend) {
  const std::vector<std::string> prompts = {"Once upon a time", "The cat", "Tom had a big",
                                            "Lily and Ben went to the park"};
  LLM cpu = open("cpu");
  LLM gpu = open(testing::gpu_backend_name());
  const std::vector<GenerationOutput> expected = cpu.generate(prompts, greedy(48));
  const std::vector<GenerationOutput> actual = gpu.generate(prompts, greedy(48));
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(actual[i].tokens, expected[i].tokens) << prompts[i];
  }
}

// Every clone has the demo model, so this runs wherever the backend does (BackendTest skips
// where it cannot).
class GpuDemoModel : public testing::BackendTest {
 protected:
  // A pool of 80 tokens in blocks of 4 (the demo model keeps 8 KiB of f32 K/V per token) and 8
  // tokens per step: eight prompts of about 15 tokens plus 16 generated each cannot all fit, long
  // prompts take several steps beside other sequences' decodes, and the shared opening's blocks
  // come from the prefix cache.
  static LLM open(const std::string& backend) {
    return LLM(LLMOptions{.model = testing::demo_model().string(),
                          .backend = backend,
                          .threads = 2,
                          .kv_block_size = 4,
                          .kv_cache_mib = 0.625,
                          .max_batch_tokens = 8});
  }
};

TEST_F(GpuDemoModel, BatchedWithPrefixCachingAndPreemptionEqualsTheCpuBackend) {
  std::vector<std::string> prompts;
  for (const char* ending : {"Moses", "Aaron", "the people", "the children of Israel", "Joshua",
                             "all the congregation", "the priests", "his servants"}) {
    prompts.push_back(std::string("And the LORD spake unto Moses, saying, Speak unto ") + ending);
  }
  LLM cpu = open("cpu");
  LLM gpu = open(testing::gpu_backend_name());
  const std::vector<GenerationOutput> expected = cpu.generate(prompts, greedy(16));
  const std::vector<GenerationOutput> actual = gpu.generate(prompts, greedy(16));
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(actual[i].tokens, expected[i].tokens) << prompts[i];
  }
  const EngineStats stats = gpu.stats();
  EXPECT_GT(stats.preemptions, 0) << "the pool was meant to run dry";
  EXPECT_GT(stats.prefix_hit_tokens, 0) << "the shared opening was meant to be cached";
  EXPECT_LT(stats.steps, 8 * 16) << "requests must share steps";
}

}  // namespace
}  // namespace baton
