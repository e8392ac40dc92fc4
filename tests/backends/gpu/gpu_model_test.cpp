// Whole-model checks: stories260K on the GPU backend generates exactly the CPU backend's greedy
// tokens, alone and in a batch of prompts (prefill, decode and mixed steps through the engine).

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

class GpuStories260K : public ::testing::Test {
 protected:
  // The device first: on a host without one the skip names that, with or without ../shared.
  void SetUp() override {
    testing::GpuBackend probe = testing::open_gpu_backend();
    if (!probe.backend) {
      GTEST_SKIP() << "GPU backend '" << testing::gpu_backend_name()
                   << "' is not usable here, skipping: " << probe.reason;
    }
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

}  // namespace
}  // namespace baton
