#include <gtest/gtest.h>
#include <unistd.h>

#include "baton/error.h"
#include "baton/llm.h"
#include "tests/models/tiny_model.h"

namespace baton {
namespace {

struct Case {
  const char* name;
  testing::TinyModelSpec spec;
};

class TinyModelGeneration : public ::testing::TestWithParam<Case> {
 protected:
  std::filesystem::path path() const {
    return std::filesystem::temp_directory_path() / ("baton_tiny_" + std::string(GetParam().name) +
                                                     "_" + std::to_string(::getpid()) + ".gguf");
  }
  void TearDown() override { std::filesystem::remove(path()); }
};

// The whole model on the CPU backend (paged KV cache, prefill then one token per step) must pick
// the same greedy tokens as the naive double-precision forward pass over the same weights, with
// the same log-probabilities: those see every logit, where a greedy choice can survive a wrong
// attention window or soft-cap.
TEST_P(TinyModelGeneration, GreedyTokensMatchANaiveForwardPass) {
  const testing::TinyModel model(GetParam().spec, 42);
  model.write(path());
  LLM llm(LLMOptions{.model = path().string(), .backend = "cpu", .threads = 2, .kv_block_size = 4});
  GenerationParams params;
  params.sampling.temperature = 0;
  params.max_tokens = 12;
  params.ignore_eos = true;
  params.logprobs = 1;
  const GenerationOutput out = llm.generate("a b c", params);
  EXPECT_EQ(out.tokens, model.greedy(out.prompt_tokens, 12));
  std::vector<int32_t> context = out.prompt_tokens;
  for (const TokenLogprobs& step : out.completions.at(0).logprobs) {
    // fp32 weights and activations through a few layers: observed differences are ~1e-6.
    EXPECT_NEAR(step.chosen.logprob, model.log_softmax(context)[step.chosen.token], 1e-4)
        << "after " << context.size() << " tokens";
    context.push_back(step.chosen.token);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Architectures, TinyModelGeneration,
    ::testing::Values(
        Case{"llama_gqa", {.architecture = "llama", .n_head_kv = 2}},
        Case{"llama_mha_untied", {.architecture = "llama", .n_head_kv = 4, .tied_output = false}},
        Case{"llama_rope_scaled", {.architecture = "llama", .rope_scaling_factor = 4.0f}},
        Case{"qwen2_mqa", {.architecture = "qwen2", .n_head_kv = 1}},
        Case{"phi3_gqa_untied", {.architecture = "phi3", .tied_output = false}},
        Case{"phi3_mha", {.architecture = "phi3", .n_head_kv = 4}},
        Case{"phi3_long_rope_long_factors",
             {.architecture = "phi3", .long_rope_original_context = 128}},
        Case{"phi3_long_rope_short_factors",
             {.architecture = "phi3", .long_rope_original_context = 4096}},
        Case{"gemma2_gqa", {.architecture = "gemma2"}},
        Case{"gemma2_mqa_three_layers", {.architecture = "gemma2", .n_head_kv = 1, .n_layer = 3}},
        Case{"gemma2_every_layer_windowed", {.architecture = "gemma2", .swa_period = 0}},
        Case{"gemma2_window_pattern_3", {.architecture = "gemma2", .n_layer = 3, .swa_period = 3}},
        Case{"qwen3_head_norms", {.architecture = "qwen3"}},
        Case{"gemma3_local_and_global_layers",
             {.architecture = "gemma3", .n_layer = 3, .swa_period = 3}},
        Case{"smollm3_nope_layer", {.architecture = "smollm3", .n_layer = 4}},
        Case{"olmo2_post_norms_untied", {.architecture = "olmo2", .tied_output = false}}),
    [](const auto& info) { return std::string(info.param.name); });

// Loads a tiny model of `spec` written without `skipped`; the error it must fail with.
Error load_error_without(const testing::TinyModelSpec& spec, const std::string& skipped) {
  const std::string& architecture = spec.architecture;
  const auto path = std::filesystem::temp_directory_path() /
                    ("baton_tiny_without_" + std::to_string(::getpid()) + ".gguf");
  testing::TinyModel(spec, 1).write(path, {skipped});
  struct Remove {
    std::filesystem::path path;
    ~Remove() { std::filesystem::remove(path); }
  } remove{path};
  try {
    LLM llm(LLMOptions{.model = path.string(), .backend = "cpu"});
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "a " << architecture << " model without " << skipped << " loaded";
  return Error(ErrorCategory::kInternal, "loaded");
}

// A rope base that is not positive would give NaN logits, not an error, if loading took it.
TEST(TinyModelErrors, NonPositiveRopeBaseIsNamed) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("baton_tiny_rope_base_" + std::to_string(::getpid()) + ".gguf");
  testing::TinyModel({.rope_freq_base = 0.0f}, 1).write(path);
  try {
    LLM llm(LLMOptions{.model = path.string(), .backend = "cpu"});
    ADD_FAILURE() << "a rope base of 0 loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidModel);
    EXPECT_NE(std::string(e.what()).find("llama.rope.freq_base = 0"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove(path);
}

TEST(TinyModelErrors, MissingTensorIsNamed) {
  const Error e = load_error_without({.architecture = "qwen2"}, "blk.1.ffn_up.weight");
  EXPECT_EQ(e.category(), ErrorCategory::kInvalidModel);
  EXPECT_NE(std::string(e.what()).find("blk.1.ffn_up.weight"), std::string::npos) << e.what();
}

TEST(TinyModelErrors, Qwen2WithoutBiasesIsRejected) {
  const Error e = load_error_without({.architecture = "qwen2"}, "blk.0.attn_k.bias");
  EXPECT_EQ(e.category(), ErrorCategory::kInvalidModel);
  EXPECT_NE(std::string(e.what()).find("blk.0.attn_k.bias"), std::string::npos) << e.what();
}

TEST(TinyModelErrors, Gemma2WithoutAPostNormNamesTheTensor) {
  const Error e = load_error_without({.architecture = "gemma2"}, "blk.0.post_ffw_norm.weight");
  EXPECT_EQ(e.category(), ErrorCategory::kInvalidModel);
  EXPECT_NE(std::string(e.what()).find("blk.0.post_ffw_norm.weight"), std::string::npos)
      << e.what();
}

TEST(TinyModelErrors, Phi3LongRopeWithOneFactorSetIsRejected) {
  const Error e = load_error_without({.architecture = "phi3", .long_rope_original_context = 128},
                                     "rope_factors_short.weight");
  EXPECT_EQ(e.category(), ErrorCategory::kInvalidModel);
  EXPECT_NE(std::string(e.what()).find("rope_factors_short"), std::string::npos) << e.what();
}

TEST(TinyModelErrors, Phi3WithoutItsFusedQkvNamesTheTensor) {
  const Error e = load_error_without({.architecture = "phi3"}, "blk.1.attn_qkv.weight");
  EXPECT_EQ(e.category(), ErrorCategory::kInvalidModel);
  EXPECT_NE(std::string(e.what()).find("blk.1.attn_qkv.weight"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace baton
