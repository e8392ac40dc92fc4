// `baton convert`'s library: a tiny random Hugging Face Llama converted to GGUF must give the
// logits of transformers' forward pass (which proves the q/k row permutation) and tokenize as
// SentencePiece does.

#include "core/formats/hf_import/convert_checkpoint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>

#include "baton/error.h"
#include "baton/llm.h"
#include "core/api/loaded_model.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/formats/hf_import/safetensors_file.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "core/serving/engine/step_runner.h"
#include "tests/core/formats/hf_import/tiny_hf_llama.h"
#include "tests/temp_file.h"

namespace baton::hf {
namespace {

using testing::TempDir;
using testing::TempFile;
using testing::TinyHfLlama;
using testing::TinyHfSpec;

// Every position's logits of `tokens`, computed by Baton's CPU backend from `gguf` in one step.
std::vector<std::vector<float>> baton_logits(const std::filesystem::path& gguf,
                                             const std::vector<int32_t>& tokens) {
  const LoadedModel loaded(LLMOptions{.model = gguf.string(), .backend = "cpu", .threads = 2});
  const ModelConfig& c = loaded.model->config();
  const PagedKvCache cache({c.n_layer, c.n_head_kv, c.head_dim, 16, 1}, *loaded.backend);
  SoloSequence sequence(*loaded.model, *loaded.backend, cache);
  std::vector<int32_t> rows(tokens.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
  const std::vector<float> flat = sequence.step(tokens, rows);
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    out.emplace_back(flat.begin() + i * c.n_vocab, flat.begin() + (i + 1) * c.n_vocab);
  }
  return out;
}

std::vector<int32_t> sentencepiece_ids(const std::filesystem::path& dir, const std::string& text) {
  sentencepiece::SentencePieceProcessor sp;
  EXPECT_TRUE(sp.Load((dir / "tokenizer.model").string()).ok());
  std::vector<int> ids;
  EXPECT_TRUE(sp.Encode(text, &ids).ok());
  return {ids.begin(), ids.end()};
}

std::string convert_error(const std::filesystem::path& dir) {
  const TempFile out("error.gguf");
  try {
    convert_checkpoint(dir, out.path());
  } catch (const Error& e) {
    EXPECT_FALSE(std::filesystem::exists(out.path())) << "a failed conversion left a file";
    return e.what();
  }
  return "no error";
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << text;
}

void edit_config(const std::filesystem::path& dir,
                 const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
  edit(config);
  std::ofstream(dir / "config.json") << config.dump();
}

struct Case {
  const char* name;
  TinyHfSpec spec;
};

class ConvertedLogits : public ::testing::TestWithParam<Case> {};

// Tolerance: Baton computes in f32 what the reference computes in f64; 1e-4 of the largest
// logit leaves room for that rounding, while q/k rows left in rotate_half order (or a wrong
// RoPE layout) miss by tens of percent from the second position on.
TEST_P(ConvertedLogits, MatchTransformersForwardPass) {
  const TempDir dir("hf_" + std::string(GetParam().name));
  const TinyHfLlama model(dir.path(), GetParam().spec, 7);
  const TempFile out(std::string(GetParam().name) + ".gguf");
  const ConvertSummary summary =
      convert_checkpoint(dir.path(), out.path(), {.out_type = DType::kF32});
  EXPECT_EQ(summary.n_vocab, model.vocab_size());
  EXPECT_EQ(summary.tied_embeddings, GetParam().spec.tied);
  EXPECT_EQ(summary.file_bytes, std::filesystem::file_size(out.path()));

  std::vector<int32_t> tokens = {1};
  for (int32_t id : sentencepiece_ids(dir.path(), "the little cat jumped on 42 red mats"))
    tokens.push_back(id);
  ASSERT_GE(tokens.size(), 8u);
  const std::vector<std::vector<double>> expected = model.logits(tokens);
  const std::vector<std::vector<float>> actual = baton_logits(out.path(), tokens);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t t = 0; t < tokens.size(); ++t) {
    ASSERT_EQ(actual[t].size(), expected[t].size());
    double max_logit = 0, max_error = 0;
    for (size_t i = 0; i < expected[t].size(); ++i) {
      max_logit = std::max(max_logit, std::abs(expected[t][i]));
      max_error = std::max(max_error, std::abs(actual[t][i] - expected[t][i]));
    }
    EXPECT_LE(max_error, 1e-4 * max_logit) << "position " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Checkpoints, ConvertedLogits,
    ::testing::Values(
        Case{"gqa", {.kv_heads = 2}},
        Case{"mha_tied_padded_vocab",
             {.kv_heads = 4, .extra_vocab = 5, .tied = true, .rope_theta = 500.0}},
        Case{"qwen2_biases_tied", {.kv_heads = 1, .tied = true, .qwen2 = true}},
        Case{"phi3_fused_projections", {.kv_heads = 2, .phi3 = true}},
        Case{"phi3_long_rope", {.kv_heads = 2, .phi3 = true, .long_rope = true}},
        Case{"gemma2", {.kv_heads = 2, .tied = true, .gemma2 = true}},
        Case{"gemma3_local_and_global_layers",
             {.layers = 6, .kv_heads = 2, .tied = true, .gemma3 = true}},
        Case{"gemma3_text_of_a_multimodal_checkpoint",
             {.layers = 6, .kv_heads = 2, .tied = true, .gemma3 = true, .multimodal = true}},
        Case{"qwen3_head_norms", {.kv_heads = 2, .qwen3 = true}},
        Case{"olmo2_post_norms", {.kv_heads = 4, .olmo2 = true}},
        Case{"smollm3_nope_layers", {.layers = 4, .kv_heads = 2, .smollm3 = true}},
        Case{"llama3_rope_scaling", {.kv_heads = 2, .llama3_rope = true}},
        Case{"qwen2_yarn", {.kv_heads = 2, .qwen2 = true, .yarn = true}},
        Case{"phi4_partial_rotary_long_rope",
             {.kv_heads = 2, .phi3 = true, .long_rope = true, .partial_rotary = true}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ConvertCheckpoint, TokenizesAsSentencePiece) {
  const TempDir dir("hf_tokenizer");
  const TinyHfLlama model(dir.path(), {.extra_vocab = 3}, 11);
  const TempFile out("tokenizer.gguf");
  convert_checkpoint(dir.path(), out.path(), {.out_type = DType::kF32});

  const LLM llm(LLMOptions{.model = out.str(), .backend = "cpu", .threads = 2});
  for (const std::string text : {"the cat sat on a mat", "Tom has 1234 apples!",
                                 "  two  spaces and Ünïcödé ☃", "jumped\nnew line"}) {
    std::vector<int32_t> expected = {1};  // add_bos_token is true
    for (int32_t id : sentencepiece_ids(dir.path(), text)) expected.push_back(id);
    EXPECT_EQ(llm.tokenize(text, true, false), expected) << text;
  }

  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  EXPECT_EQ(file.get_string("tokenizer.ggml.model"), "llama");
  const std::vector<std::string> tokens = file.get_string_array("tokenizer.ggml.tokens");
  const std::vector<int64_t> types = file.get_int_array("tokenizer.ggml.token_type");
  ASSERT_EQ(static_cast<int>(tokens.size()), model.vocab_size());
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(types[0], 2);
  EXPECT_EQ(types[1], 3);  // <s>
  EXPECT_EQ(tokens[3], "<0x00>");
  EXPECT_EQ(types[3], 6);
  const size_t last = tokens.size() - 1;
  EXPECT_EQ(tokens[last], "[PAD" + std::to_string(last) + "]");
  EXPECT_EQ(types[last], 5);
  EXPECT_EQ(file.get_int("tokenizer.ggml.bos_token_id"), 1);
  EXPECT_EQ(file.get_int("tokenizer.ggml.eos_token_id"), 2);
  EXPECT_EQ(file.get_int("tokenizer.ggml.unknown_token_id"), 0);
  EXPECT_FALSE(file.contains("tokenizer.ggml.padding_token_id"));
  EXPECT_TRUE(file.get_bool("tokenizer.ggml.add_bos_token"));
  EXPECT_FALSE(file.get_bool("tokenizer.ggml.add_eos_token"));
}

TEST(ConvertCheckpoint, WritesLlamaMetadataAndOutTypes) {
  const TempDir dir("hf_metadata");
  const TinyHfLlama model(dir.path(), {}, 3);
  edit_config(dir.path(), [](nlohmann::json& c) {
    c["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  });
  std::ofstream(dir.path() / "tokenizer_config.json")
      << R"({"chat_template": [{"name": "tool_use", "template": "T"},)"
         R"( {"name": "default", "template": "{{ messages }}"}], "add_eos_token": true})";
  for (const auto& [type, file_type] :
       {std::pair{DType::kF32, 0}, std::pair{DType::kF16, 1}, std::pair{DType::kBF16, 32}}) {
    const TempFile out("metadata.gguf");
    convert_checkpoint(dir.path(), out.path(), {.out_type = type, .name = "tiny"});
    const gguf::GgufFile file = gguf::GgufFile::open(out.path());
    EXPECT_EQ(file.get_string("general.architecture"), "llama");
    EXPECT_EQ(file.get_string("general.name"), "tiny");
    EXPECT_EQ(file.get_int("general.file_type"), file_type);
    EXPECT_EQ(file.get_int("llama.context_length"), 256);
    EXPECT_EQ(file.get_int("llama.embedding_length"), 64);
    EXPECT_EQ(file.get_int("llama.block_count"), 2);
    EXPECT_EQ(file.get_int("llama.feed_forward_length"), 96);
    EXPECT_EQ(file.get_int("llama.attention.head_count"), 4);
    EXPECT_EQ(file.get_int("llama.attention.head_count_kv"), 2);
    EXPECT_EQ(file.get_int("llama.rope.dimension_count"), 16);
    EXPECT_EQ(file.get_int("llama.vocab_size"), model.vocab_size());
    EXPECT_FLOAT_EQ(file.get_float("llama.attention.layer_norm_rms_epsilon"), 1e-5f);
    EXPECT_FLOAT_EQ(file.get_float("llama.rope.freq_base"), 10000.0f);
    EXPECT_EQ(file.get_string("llama.rope.scaling.type"), "linear");
    EXPECT_FLOAT_EQ(file.get_float("llama.rope.scaling.factor"), 2.0f);
    EXPECT_EQ(file.get_string("tokenizer.chat_template"), "{{ messages }}");
    EXPECT_TRUE(file.get_bool("tokenizer.ggml.add_eos_token"));
    EXPECT_EQ(file.tensors().size(), 2u + 2u * 9u + 1u);
    EXPECT_EQ(dtype_from_ggml_type(file.find_tensor("blk.1.attn_q.weight")->ggml_type), type);
    EXPECT_EQ(dtype_from_ggml_type(file.find_tensor("output.weight")->ggml_type), type);
    EXPECT_EQ(dtype_from_ggml_type(file.find_tensor("blk.0.ffn_norm.weight")->ggml_type),
              DType::kF32);
  }
}

// Phi-3 is written as GGUF phi3 with its projections fused, as llama.cpp's converter writes it;
// its sliding window (128, under max_position_embeddings 256) becomes the context length, while
// a Qwen2's, unused without use_sliding_window, does not. Logits: ConvertedLogits.
TEST(ConvertCheckpoint, Phi3KeepsFusedProjectionsAndCapsTheContextAtItsWindow) {
  const TempDir dir("hf_phi3");
  const TinyHfLlama model(dir.path(), {.phi3 = true}, 5);
  const TempFile out("phi3.gguf");
  convert_checkpoint(dir.path(), out.path(), {.out_type = DType::kF32});
  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  EXPECT_EQ(file.get_string("general.architecture"), "phi3");
  EXPECT_EQ(file.get_int("phi3.context_length"), 128);
  EXPECT_EQ(file.find_tensor("blk.0.attn_qkv.weight")->shape, (Shape{64 + 2 * 32, 64}));
  EXPECT_EQ(file.find_tensor("blk.1.ffn_up.weight")->shape, (Shape{2 * 96, 64}));
  EXPECT_EQ(file.find_tensor("blk.1.ffn_gate.weight"), nullptr);

  // Qwen2 uses its sliding_window only with use_sliding_window (refused): the context stays.
  const TempDir qwen2_dir("hf_qwen2_window");
  const TinyHfLlama qwen2(qwen2_dir.path(), {.qwen2 = true}, 6);
  edit_config(qwen2_dir.path(), [](nlohmann::json& c) {
    c["sliding_window"] = 64;
    c["use_sliding_window"] = false;
  });
  const TempFile qwen2_out("qwen2_window.gguf");
  convert_checkpoint(qwen2_dir.path(), qwen2_out.path(), {.out_type = DType::kF32});
  EXPECT_EQ(gguf::GgufFile::open(qwen2_out.path()).get_int("qwen2.context_length"), 256);
  edit_config(qwen2_dir.path(), [](nlohmann::json& c) { c["use_sliding_window"] = true; });
  expect_contains(convert_error(qwen2_dir.path()),
                  "config.json: use_sliding_window is not supported (Qwen2 with full attention "
                  "is)");

  edit_config(dir.path(), [](nlohmann::json& c) { c["num_key_value_heads"] = 4; });
  expect_contains(convert_error(dir.path()),
                  "tensor 'model.layers.0.self_attn.qkv_proj.weight' has shape [128, 64] but "
                  "config.json implies [192, 64]");
  edit_config(dir.path(), [](nlohmann::json& c) {
    c["num_key_value_heads"] = 2;
    c["partial_rotary_factor"] = 1.5;
  });
  expect_contains(convert_error(dir.path()),
                  "partial_rotary_factor 1.500000 of a head of 16 does not give an even number");
}

// Gemma 2 is written as GGUF gemma2, as llama.cpp's converter writes it: norms plus one, its
// soft-caps, window and query scale, and no dummy-prefix for its SentencePiece model. Logits:
// ConvertedLogits.
// Llama 3.1's rope_scaling becomes rope_freqs.weight, as llama.cpp's converter writes it, and
// transformers 5's rope_parameters (rope_theta inside) say the same as rope_scaling and
// rope_theta. YaRN's keys and Gemma 3's local base are written as llama.cpp names them.
TEST(ConvertCheckpoint, RopeScalingAndRopeParametersWriteTheSameFile) {
  const TempDir dir("hf_llama3_rope");
  const TinyHfLlama model(dir.path(), {.rope_theta = 500.0, .llama3_rope = true}, 5);
  const TempFile scaling_file("llama3_scaling.gguf"), parameters_file("llama3_parameters.gguf");
  convert_checkpoint(dir.path(), scaling_file.path(), {.out_type = DType::kF32});
  edit_config(dir.path(), [](nlohmann::json& c) {
    c["rope_parameters"] = c["rope_scaling"];
    c["rope_parameters"]["rope_theta"] = c["rope_theta"];
    c.erase("rope_scaling");
    c.erase("rope_theta");
  });
  convert_checkpoint(dir.path(), parameters_file.path(), {.out_type = DType::kF32});
  std::vector<std::vector<float>> written;
  for (const auto& path : {scaling_file.path(), parameters_file.path()}) {
    const gguf::GgufFile file = gguf::GgufFile::open(path);
    EXPECT_FLOAT_EQ(file.get_float("llama.rope.freq_base"), 500.0f);
    const Tensor factors = file.tensor("rope_freqs.weight");
    ASSERT_EQ(factors.shape(), (Shape{8}));
    written.emplace_back(factors.data<float>(), factors.data<float>() + 8);
  }
  EXPECT_EQ(written[0], written[1]);
  // From an original context of 16, pair 0 (a wavelength of 2π) lies between the two
  // wavelengths, 16/4 and 16, and is blended: 1 / ((1 - s) / 8 + s), s = (16 / 2π - 1) / 3.
  const double s = (16 / (2 * std::acos(-1.0)) - 1) / 3;
  EXPECT_NEAR(written[0][0], 1 / ((1 - s) / 8 + s), 1e-5);
  EXPECT_FLOAT_EQ(written[0][7], 8.0f);  // past the long wavelength: divided by the factor

  const TempDir yarn_dir("hf_qwen3_yarn");
  const TinyHfLlama qwen3(yarn_dir.path(), {.qwen3 = true, .yarn = true}, 5);
  edit_config(yarn_dir.path(), [](nlohmann::json& c) { c["rope_scaling"]["beta_fast"] = 16.0; });
  const TempFile yarn_file("qwen3_yarn.gguf");
  convert_checkpoint(yarn_dir.path(), yarn_file.path(), {.out_type = DType::kF32});
  const gguf::GgufFile yarn = gguf::GgufFile::open(yarn_file.path());
  EXPECT_EQ(yarn.get_string("qwen3.rope.scaling.type"), "yarn");
  EXPECT_FLOAT_EQ(yarn.get_float("qwen3.rope.scaling.factor"), 4.0f);
  EXPECT_EQ(yarn.get_int("qwen3.rope.scaling.original_context_length"), 64);
  EXPECT_FLOAT_EQ(yarn.get_float("qwen3.rope.scaling.yarn_beta_fast"), 16.0f);
  EXPECT_FALSE(yarn.find("qwen3.rope.scaling.yarn_beta_slow"));
  EXPECT_EQ(yarn.get_int("qwen3.attention.key_length"), 24);

  const TempDir gemma_dir("hf_gemma3");
  const TinyHfLlama gemma3(gemma_dir.path(), {.layers = 6, .gemma3 = true}, 5);
  const TempFile gemma_file("gemma3.gguf");
  convert_checkpoint(gemma_dir.path(), gemma_file.path(), {.out_type = DType::kF32});
  const gguf::GgufFile g3 = gguf::GgufFile::open(gemma_file.path());
  EXPECT_FLOAT_EQ(g3.get_float("gemma3.rope.freq_base_swa"), 100.0f);
  EXPECT_EQ(g3.get_int("gemma3.attention.sliding_window"), 3);
  edit_config(gemma_dir.path(), [](nlohmann::json& c) { c["sliding_window_pattern"] = 4; });
  expect_contains(convert_error(gemma_dir.path()),
                  "sliding_window_pattern 4 is not supported (6 is)");
  // transformers' per-layer lists must say what the family's fixed patterns do.
  edit_config(gemma_dir.path(), [](nlohmann::json& c) {
    c.erase("sliding_window_pattern");
    c["layer_types"] = std::vector<std::string>(6, "sliding_attention");
  });
  expect_contains(convert_error(gemma_dir.path()),
                  "layer_types is not supported (a window on all layers but every 6th is)");
  edit_config(gemma_dir.path(), [](nlohmann::json& c) { c["layer_types"][5] = "full_attention"; });
  EXPECT_EQ(convert_error(gemma_dir.path()), "no error");

  const TempDir smol_dir("hf_smollm3");
  const TinyHfLlama smollm3(smol_dir.path(), {.layers = 4, .smollm3 = true}, 5);
  edit_config(smol_dir.path(), [](nlohmann::json& c) { c["no_rope_layers"][3] = 1; });
  expect_contains(convert_error(smol_dir.path()),
                  "no_rope_layers is not supported (no rotary embedding on every 4th layer is)");
  edit_config(smol_dir.path(), [](nlohmann::json& c) {
    c["no_rope_layers"] = nullptr;
    c["no_rope_layer_interval"] = 3;
  });
  expect_contains(convert_error(smol_dir.path()), "no_rope_layer_interval is not supported");
}

TEST(ConvertCheckpoint, Gemma2WritesItsMetadataAndNormsPlusOne) {
  const TempDir dir("hf_gemma2");
  const TinyHfLlama model(dir.path(), {.gemma2 = true}, 5);
  const TempFile out("gemma2.gguf");
  const ConvertSummary summary =
      convert_checkpoint(dir.path(), out.path(), {.out_type = DType::kF32});
  EXPECT_TRUE(summary.tied_embeddings);
  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  EXPECT_EQ(file.get_string("general.architecture"), "gemma2");
  EXPECT_EQ(file.get_int("gemma2.attention.key_length"), 24);
  EXPECT_EQ(file.get_int("gemma2.attention.sliding_window"), 4);
  EXPECT_FLOAT_EQ(file.get_float("gemma2.attn_logit_softcapping"), 3.0f);
  EXPECT_FLOAT_EQ(file.get_float("gemma2.final_logit_softcapping"), 5.0f);
  EXPECT_FLOAT_EQ(file.get_float("gemma2.attention.scale"), 1.0f / std::sqrt(20.0f));
  EXPECT_FALSE(file.get_bool("tokenizer.ggml.add_space_prefix"));
  EXPECT_EQ(file.find_tensor("output.weight"), nullptr);
  EXPECT_EQ(file.find_tensor("blk.1.attn_q.weight")->shape, (Shape{4 * 24, 64}));
  const SafetensorsFile source = SafetensorsFile::open(dir.path() / "model.safetensors");
  for (const auto& [hf, gg] :
       {std::pair{"model.layers.1.pre_feedforward_layernorm.weight", "blk.1.ffn_norm.weight"},
        std::pair{"model.layers.1.post_feedforward_layernorm.weight", "blk.1.post_ffw_norm.weight"},
        std::pair{"model.norm.weight", "output_norm.weight"}}) {
    const Tensor stored = source.tensor(hf), written = file.tensor(gg);
    for (int64_t i = 0; i < 64; ++i) {
      EXPECT_FLOAT_EQ(written.data<float>()[i], stored.data<float>()[i] + 1.0f) << gg << " " << i;
    }
  }
  edit_config(dir.path(), [](nlohmann::json& c) { c["hidden_activation"] = "relu"; });
  expect_contains(convert_error(dir.path()), "hidden_activation 'relu' is not supported");
}

TEST(ConvertCheckpoint, ShardedCheckpointConvertsLikeASingleFile) {
  const TempDir dir("hf_sharded");
  const TinyHfLlama model(dir.path(), {.layers = 1}, 5);
  const TempFile single("single.gguf"), sharded("sharded.gguf");
  convert_checkpoint(dir.path(), single.path(), {.name = "m"});

  // Layer tensors to one shard, the rest to another, listed by an index.
  const SafetensorsFile whole = SafetensorsFile::open(dir.path() / "model.safetensors");
  std::vector<testing::SafetensorsEntry> shards[2];
  nlohmann::json index = {{"metadata", {{"total_size", 0}}},
                          {"weight_map", nlohmann::json::object()}};
  for (const SafetensorsTensor& t : whole.tensors()) {
    const Tensor data = whole.tensor(t.name);
    const int shard = t.name.starts_with("model.layers.") ? 1 : 0;
    std::vector<float> values(data.data<float>(), data.data<float>() + data.numel());
    shards[shard].push_back(testing::f32_entry(t.name, t.shape, values));
    index["weight_map"][t.name] =
        "model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors";
  }
  for (int s = 0; s < 2; ++s) {
    testing::write_safetensors(
        dir.path() / ("model-0000" + std::to_string(s + 1) + "-of-00002.safetensors"), shards[s]);
  }
  std::ofstream(dir.path() / "model.safetensors.index.json") << index.dump();
  std::filesystem::remove(dir.path() / "model.safetensors");
  convert_checkpoint(dir.path(), sharded.path(), {.name = "m"});

  std::ifstream a(single.path(), std::ios::binary), b(sharded.path(), std::ios::binary);
  EXPECT_TRUE(
      std::equal(std::istreambuf_iterator<char>(a), {}, std::istreambuf_iterator<char>(b), {}));

  // An index that maps a tensor to a shard without it.
  index["weight_map"]["model.norm.weight"] = "model-00002-of-00002.safetensors";
  std::ofstream(dir.path() / "model.safetensors.index.json") << index.dump();
  expect_contains(convert_error(dir.path()),
                  "tensor 'model.norm.weight' is not in its shard model-00002-of-00002");
  index["weight_map"]["model.norm.weight"] = "../model-00001-of-00002.safetensors";
  std::ofstream(dir.path() / "model.safetensors.index.json") << index.dump();
  expect_contains(convert_error(dir.path()), "which is not a file name");
}

TEST(ConvertCheckpoint, CheckpointThatIsNotTheConfiguredLlamaIsRejected) {
  const TempDir dir("hf_mismatch");
  const TinyHfLlama model(dir.path(), {}, 9);
  const std::filesystem::path weights = dir.path() / "model.safetensors";
  const std::filesystem::path saved = dir.path() / "saved";
  std::filesystem::copy_file(weights, saved);
  const SafetensorsFile original = SafetensorsFile::open(saved);
  const auto rewrite =
      [&](const std::function<void(std::vector<testing::SafetensorsEntry>&)>& edit) {
        std::vector<testing::SafetensorsEntry> entries;
        for (const SafetensorsTensor& t : original.tensors()) {
          const Tensor data = original.tensor(t.name);
          entries.push_back(testing::f32_entry(
              t.name, t.shape, std::span<const float>(data.data<float>(), data.numel())));
        }
        edit(entries);
        testing::write_safetensors(weights, entries);
      };

  rewrite([](auto& e) {
    e.push_back(e.back());
    e.back().name = "model.layers.2.mlp.up_proj.weight";
  });
  expect_contains(
      convert_error(dir.path()),
      "tensor 'model.layers.2.mlp.up_proj.weight' is not part of a LlamaForCausalLM of 2 "
      "layers");
  rewrite([](auto& e) {
    std::erase_if(e, [](const auto& t) { return t.name == "model.layers.1.mlp.down_proj.weight"; });
  });
  expect_contains(convert_error(dir.path()),
                  "the checkpoint has no tensor 'model.layers.1.mlp.down_proj.weight'");
  rewrite([](auto& e) {
    for (auto& t : e) {
      if (t.name == "model.layers.0.self_attn.k_proj.weight") t.shape = {16, 128};
    }
  });
  expect_contains(convert_error(dir.path()),
                  "tensor 'model.layers.0.self_attn.k_proj.weight' has shape [16, 128] but "
                  "config.json implies [32, 64]");
  rewrite([](auto& e) {
    e.push_back(testing::f32_entry("model.layers.0.self_attn.rotary_emb.inv_freq", {8},
                                   std::vector<float>(8, 1.0f)));
  });
  const TempFile out("inv_freq.gguf");
  EXPECT_NO_THROW(convert_checkpoint(dir.path(), out.path()));

  edit_config(dir.path(), [](nlohmann::json& c) {
    c["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 8.0}};
  });
  expect_contains(convert_error(dir.path()),
                  "config.json: rope_scaling type 'dynamic' is not supported (supported: "
                  "default, linear, yarn, llama3)");
  edit_config(dir.path(), [](nlohmann::json& c) {
    c.erase("rope_scaling");
    c["num_key_value_heads"] = 3;
  });
  expect_contains(convert_error(dir.path()),
                  "num_attention_heads 4 is not a multiple of num_key_value_heads 3");
  edit_config(dir.path(), [](nlohmann::json& c) {
    c["num_key_value_heads"] = 2;
    c["hidden_size"] = "64";
  });
  expect_contains(convert_error(dir.path()),
                  "config.json: \"hidden_size\" is \"64\", not an integer");
  // A vocabulary the converter would exhaust memory writing out.
  edit_config(dir.path(), [](nlohmann::json& c) {
    c["hidden_size"] = 64;
    c["vocab_size"] = 2000000000;
  });
  expect_contains(convert_error(dir.path()),
                  "\"vocab_size\" = 2000000000 is out of range (at most 16777216)");
}

TEST(ConvertCheckpoint, AddedTokensBecomeControlOrUserDefined) {
  const TempDir dir("hf_added");
  const TinyHfLlama model(dir.path(), {.extra_vocab = 3}, 13);
  const int first = model.vocab_size() - 3;
  nlohmann::json decoder = nlohmann::json::object();
  decoder[std::to_string(first)] = {{"content", "<|im_start|>"}, {"special", false}};
  decoder[std::to_string(first + 1)] = {{"content", "\xe2\x96\x81hello"}, {"special", false}};
  decoder[std::to_string(first + 2)] = {{"content", "<tool>"}, {"special", true}};
  std::ofstream(dir.path() / "tokenizer_config.json")
      << nlohmann::json{{"added_tokens_decoder", decoder}}.dump();
  const TempFile out("added.gguf");
  convert_checkpoint(dir.path(), out.path());
  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  const std::vector<std::string> tokens = file.get_string_array("tokenizer.ggml.tokens");
  const std::vector<int64_t> types = file.get_int_array("tokenizer.ggml.token_type");
  const std::vector<float> scores = file.get_float_array("tokenizer.ggml.scores");
  EXPECT_EQ(tokens[first], "<|im_start|>");
  EXPECT_EQ(types[first], 3);  // spelled like a control token
  EXPECT_EQ(tokens[first + 1], " hello");
  EXPECT_EQ(types[first + 1], 4);
  EXPECT_EQ(types[first + 2], 3);
  EXPECT_EQ(scores[first + 2], -1000.0f);
}

TEST(ConvertCheckpoint, AddedTokenFlagsReachTheGgufAndTheTokenizer) {
  const TempDir dir("hf_added_flags");
  const TinyHfLlama model(dir.path(), {.extra_vocab = 2}, 13);
  const int first = model.vocab_size() - 2;
  nlohmann::json decoder = nlohmann::json::object();
  decoder[std::to_string(first)] = {{"content", "<|end|>"}, {"special", true}, {"rstrip", true}};
  decoder[std::to_string(first + 1)] = {
      {"content", "<|user|>"}, {"special", true}, {"lstrip", true}, {"single_word", true}};
  std::ofstream(dir.path() / "tokenizer_config.json")
      << nlohmann::json{{"added_tokens_decoder", decoder}}.dump();
  const TempFile out("added_flags.gguf");
  convert_checkpoint(dir.path(), out.path());
  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  EXPECT_EQ(file.get_int_array(std::string(kRstripIdsKey)), std::vector<int64_t>{first});
  EXPECT_EQ(file.get_int_array(std::string(kLstripIdsKey)), std::vector<int64_t>{first + 1});
  EXPECT_EQ(file.get_int_array(std::string(kSingleWordIdsKey)), std::vector<int64_t>{first + 1});
  const auto tokenizer = Tokenizer::create(vocabulary_from_gguf(file));
  EXPECT_EQ(tokenizer->encode("a  <|user|> x<|end|>  b", false, true),
            tokenizer->encode("a <|user|> x<|end|>b", false, true));
}

}  // namespace
}  // namespace baton::hf
