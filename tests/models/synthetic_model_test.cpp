// write_synthetic_model: llama.cpp's names, keys and types, loadable and runnable by baton::LLM.

#include "tools/model_tools/synthetic_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "baton/error.h"
#include "baton/llm.h"
#include "core/formats/gguf/gguf_file.h"
#include "tests/temp_file.h"
#include "tests/test_data.h"

namespace baton {
namespace {

using testing::TempFile;

SyntheticShape tiny_shape(const std::string& arch = "llama") {
  return SyntheticShape{.architecture = arch,
                        .n_embd = 64,
                        .n_layer = 2,
                        .n_head = 4,
                        .n_head_kv = 2,
                        .n_ff = 128,
                        .n_vocab = 320,
                        .n_ctx = 256,
                        .tied_embeddings = arch == "qwen2" || arch == "gemma2"};
}

// Greedy tokens of a loaded synthetic model, which must run.
std::vector<int32_t> generate_three(const std::filesystem::path& path) {
  LLM llm(LLMOptions{.model = path.string(), .backend = "cpu", .threads = 1});
  GenerationParams greedy;
  greedy.sampling.temperature = 0.0f;
  greedy.max_tokens = 3;
  greedy.ignore_eos = true;
  return llm.generate("a", greedy).tokens;
}

std::vector<char> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class SynthesizedEachType : public ::testing::TestWithParam<DType> {};

TEST_P(SynthesizedEachType, HasLlamaCppMetadataAndTypesAndGeneratesGreedily) {
  const std::filesystem::path demo = testing::demo_model();
  const DType type = GetParam();
  TempFile out(std::string(to_string(type)) + ".gguf");
  const SynthSummary summary = write_synthetic_model(
      {.shape = tiny_shape(), .name = "tiny", .weight_type = type, .vocab_from = demo}, out.path());

  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  const gguf::GgufFile source = gguf::GgufFile::open(demo);
  EXPECT_EQ(file.get_string("general.architecture"), "llama");
  EXPECT_EQ(file.get_string("general.name"), "tiny");
  const std::map<DType, int64_t> llama_ftype = {
      {DType::kF32, 0},  {DType::kF16, 1},  {DType::kQ4_0, 2}, {DType::kQ4_1, 3},
      {DType::kQ8_0, 7}, {DType::kQ5_0, 8}, {DType::kQ5_1, 9}, {DType::kBF16, 32}};
  EXPECT_EQ(file.get_int("general.file_type"), llama_ftype.at(type));
  EXPECT_EQ(file.get_int("llama.embedding_length"), 64);
  EXPECT_EQ(file.get_int("llama.attention.head_count_kv"), 2);
  EXPECT_EQ(file.get_int("llama.rope.dimension_count"), 16);
  EXPECT_EQ(file.get_string_array("tokenizer.ggml.tokens"),
            source.get_string_array("tokenizer.ggml.tokens"));
  EXPECT_EQ(file.get_int("tokenizer.ggml.bos_token_id"),
            source.get_int("tokenizer.ggml.bos_token_id"));
  EXPECT_EQ(summary.n_vocab, 2048);  // the demo model's vocabulary, not the shape's 320

  ASSERT_NE(file.find_tensor("output.weight"), nullptr);
  EXPECT_EQ(file.find_tensor("token_embd.weight")->shape, (Shape{2048, 64}));
  int64_t params = 0;
  for (const gguf::TensorInfo& t : file.tensors()) {
    const DType expected = t.shape.size() == 2 ? type : DType::kF32;
    EXPECT_EQ(t.ggml_type, static_cast<uint32_t>(expected)) << t.name;
    params += t.shape.size() == 2 ? t.shape[0] * t.shape[1] : t.shape[0];
  }
  EXPECT_EQ(file.tensors().size(), 3u + 2 * 9);
  EXPECT_EQ(summary.n_params, params);

  LLM llm(LLMOptions{.model = out.path().string(), .backend = "cpu", .threads = 2});
  GenerationParams greedy;
  greedy.sampling.temperature = 0.0f;
  greedy.max_tokens = 4;
  greedy.ignore_eos = true;
  const GenerationOutput first = llm.generate("In the beginning", greedy);
  EXPECT_EQ(first.tokens.size(), 4u);
  for (int32_t id : first.tokens) EXPECT_LT(id, 2048);
  EXPECT_EQ(llm.generate("In the beginning", greedy).tokens, first.tokens);
}

INSTANTIATE_TEST_SUITE_P(Types, SynthesizedEachType,
                         ::testing::Values(DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0,
                                           DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(SyntheticModel, Qwen2HasF32QkvBiasesAndTiedEmbeddings) {
  TempFile out("qwen2.gguf");
  write_synthetic_model({.shape = tiny_shape("qwen2"), .weight_type = DType::kQ8_0}, out.path());
  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  EXPECT_EQ(file.get_string("general.architecture"), "qwen2");
  EXPECT_EQ(file.get_int("qwen2.block_count"), 2);
  EXPECT_EQ(file.find_tensor("output.weight"), nullptr);
  for (const char* bias : {"blk.1.attn_q.bias", "blk.1.attn_k.bias", "blk.1.attn_v.bias"}) {
    ASSERT_NE(file.find_tensor(bias), nullptr) << bias;
    EXPECT_EQ(file.find_tensor(bias)->ggml_type, static_cast<uint32_t>(DType::kF32)) << bias;
  }
  // Without --vocab-from: a generated SentencePiece vocabulary of the shape's size.
  EXPECT_EQ(file.get_string_array("tokenizer.ggml.tokens").size(), 320u);
  EXPECT_EQ(generate_three(out.path()).size(), 3u);
}

TEST(SyntheticModel, Phi3FusesQkvAndGateUpAsLlamaCppDoes) {
  TempFile out("phi3.gguf");
  write_synthetic_model({.shape = tiny_shape("phi3"), .weight_type = DType::kQ8_0}, out.path());
  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  EXPECT_EQ(file.find_tensor("blk.0.attn_qkv.weight")->shape, (Shape{64 + 2 * 32, 64}));
  EXPECT_EQ(file.find_tensor("blk.0.ffn_up.weight")->shape, (Shape{2 * 128, 64}));
  EXPECT_EQ(file.find_tensor("blk.0.attn_q.weight"), nullptr);
  EXPECT_EQ(file.find_tensor("blk.0.ffn_gate.weight"), nullptr);
  EXPECT_EQ(generate_three(out.path()).size(), 3u);
}

TEST(SyntheticModel, Phi3LongRopeWritesBothFactorSetsAndTheirKeys) {
  TempFile out("phi3_long_rope.gguf");
  SyntheticShape shape = tiny_shape("phi3");
  shape.long_rope_original_context = 64;  // of 256: attn_factor sqrt(1 + ln 4 / ln 64)
  write_synthetic_model({.shape = shape, .weight_type = DType::kF16}, out.path());
  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  EXPECT_EQ(file.get_int("phi3.rope.scaling.original_context_length"), 64);
  EXPECT_NEAR(file.get_float("phi3.rope.scaling.attn_factor"),
              std::sqrt(1 + std::log(4.0) / std::log(64.0)), 1e-6);
  for (const char* name : {"rope_factors_short.weight", "rope_factors_long.weight"}) {
    const Tensor factors = file.tensor(name);
    ASSERT_EQ(factors.shape(), (Shape{8})) << name;
    for (int64_t i = 0; i < 8; ++i) EXPECT_GE(factors.data<float>()[i], 1.0f) << name;
  }
  EXPECT_EQ(generate_three(out.path()).size(), 3u);
}

TEST(SyntheticModel, Gemma2HasPostNormsSoftcapsWindowAndItsOwnHeadSize) {
  TempFile out("gemma2.gguf");
  SyntheticShape shape = tiny_shape("gemma2");
  shape.head_dim = 32;  // not n_embd / n_head, as in Gemma 2
  write_synthetic_model({.shape = shape, .weight_type = DType::kF16}, out.path());
  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  EXPECT_EQ(file.get_int("gemma2.attention.key_length"), 32);
  EXPECT_EQ(file.get_float("gemma2.attn_logit_softcapping"), 50.0);
  EXPECT_EQ(file.get_float("gemma2.final_logit_softcapping"), 30.0);
  EXPECT_EQ(file.get_int("gemma2.attention.sliding_window"), 4096);
  EXPECT_EQ(file.find_tensor("blk.1.attn_q.weight")->shape, (Shape{4 * 32, 64}));
  EXPECT_NE(file.find_tensor("blk.1.post_attention_norm.weight"), nullptr);
  EXPECT_NE(file.find_tensor("blk.1.post_ffw_norm.weight"), nullptr);
  EXPECT_EQ(file.find_tensor("output.weight"), nullptr);
  EXPECT_EQ(generate_three(out.path()).size(), 3u);
}

TEST(SyntheticModel, SameSeedSameBytesOtherSeedOtherWeights) {
  TempFile a("seed_a.gguf"), b("seed_b.gguf"), c("seed_c.gguf");
  SynthOptions options{.shape = tiny_shape(), .weight_type = DType::kQ4_0, .seed = 5};
  write_synthetic_model(options, a.path());
  write_synthetic_model(options, b.path());
  options.seed = 6;
  write_synthetic_model(options, c.path());
  EXPECT_EQ(file_bytes(a.path()), file_bytes(b.path()));
  EXPECT_NE(file_bytes(a.path()), file_bytes(c.path()));
}

TEST(SyntheticModel, NamedShapesMatchTheirModels) {
  const SyntheticShape tiny = synthetic_shape("tinyllama-1.1b");
  EXPECT_EQ(tiny.n_embd, 2048);
  EXPECT_EQ(tiny.n_layer, 22);
  EXPECT_EQ(tiny.n_head_kv, 4);
  EXPECT_EQ(tiny.n_ff, 5632);
  const SyntheticShape qwen = synthetic_shape("qwen2-0.5b");
  EXPECT_EQ(qwen.architecture, "qwen2");
  EXPECT_EQ(qwen.n_vocab, 151936);
  EXPECT_TRUE(qwen.tied_embeddings);
  const SyntheticShape gemma = synthetic_shape("gemma2-2b");
  EXPECT_EQ(gemma.head_dim, 256);
  EXPECT_EQ(gemma.n_vocab, 256000);
  EXPECT_EQ(synthetic_shape("phi3-mini").n_ff, 8192);
  EXPECT_EQ(synthetic_shape_names(),
            "gemma2-2b, gemma3-1b, gemma3-4b, llama-110m, llama-3.2-1b, olmo2-1b, phi3-mini, "
            "phi4-mini, qwen2-0.5b, qwen3-0.6b, qwen3-8b, smollm3-3b, tinyllama-1.1b");
  const SyntheticShape phi4 = synthetic_shape("phi4-mini");
  EXPECT_EQ(phi4.n_rot, 96);
  EXPECT_EQ(phi4.head_dim, 128);
  EXPECT_EQ(synthetic_shape("gemma3-1b").sliding_window, 512);
  try {
    synthetic_shape("gpt-5");
    FAIL() << "an unknown shape was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'gpt-5' (known shapes: gemma2-2b, "), std::string::npos)
        << e.what();
  }
}

TEST(SyntheticModel, RejectsBadDimensionsNamingThem) {
  TempFile out("bad.gguf");
  auto expect_error = [&](SyntheticShape shape, DType type, const std::string& needle) {
    try {
      write_synthetic_model({.shape = shape, .weight_type = type}, out.path());
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(out.path()));
  };
  SyntheticShape s = tiny_shape();
  s.n_ff = 100;
  expect_error(s, DType::kQ8_0, "n_ff = 100");
  s = tiny_shape();
  s.n_head_kv = 3;
  expect_error(s, DType::kF16, "n_head_kv 3");
  s = tiny_shape();
  s.n_layer = 0;
  expect_error(s, DType::kF16, "n_layer = 0");
  expect_error(tiny_shape(), DType::kI32, "i32");
  // K-quant rows must be whole super-blocks of 256, for the output type as for the rest.
  expect_error(tiny_shape(), DType::kQ4_K,
               "n_embd = 64 is not a multiple of the q4_K block size 256");
  try {
    write_synthetic_model(
        {.shape = tiny_shape(), .weight_type = DType::kQ8_0, .output_type = DType::kQ6_K},
        out.path());
    ADD_FAILURE() << "a q6_K output with rows of 64 was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("q6_K block size 256"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton
