// quantize_model: llama.cpp's per-tensor types for the _M mixes, its fallbacks for rows that are
// not whole blocks, and files of every type that load and generate.

#include "tools/model_tools/quantize_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "baton/error.h"
#include "baton/llm.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/formats/gguf/gguf_writer.h"
#include "tests/temp_file.h"
#include "tests/test_data.h"
#include "tools/model_tools/synthetic_model.h"

namespace baton {
namespace {

using testing::TempFile;

const QuantizePreset& preset(std::string_view name) {
  const QuantizePreset* p = find_quantize_preset(name);
  EXPECT_NE(p, nullptr) << name;
  return *p;
}

// 8 layers, so the mix's rule picks layers 0, 3, 6 and 7; rows of 256 and 512, whole K-quant
// super-blocks, so nothing falls back.
void write_synth_f32(const std::filesystem::path& path, int32_t n_layer = 8) {
  write_synthetic_model({.shape = {.n_embd = 256,
                                   .n_layer = n_layer,
                                   .n_head = 4,
                                   .n_head_kv = 2,
                                   .n_ff = 512,
                                   .n_vocab = 300,
                                   .n_ctx = 128},
                         .weight_type = DType::kF32,
                         .weight_std = 0.05f},
                        path);
}

DType type_of(const gguf::GgufFile& file, const std::string& name) {
  const gguf::TensorInfo* info = file.find_tensor(name);
  EXPECT_NE(info, nullptr) << name;
  return static_cast<DType>(info->ggml_type);
}

GenerationParams greedy(int32_t max_tokens, int32_t logprobs = 0) {
  GenerationParams p;
  p.sampling.temperature = 0.0f;
  p.max_tokens = max_tokens;
  p.ignore_eos = true;
  p.logprobs = logprobs;
  return p;
}

TEST(QuantizePresets, FindsEveryNameInEitherCaseAndRejectsOthers) {
  EXPECT_EQ(quantize_presets().size(), 19u);
  for (const QuantizePreset& p : quantize_presets()) EXPECT_EQ(find_quantize_preset(p.name), &p);
  EXPECT_EQ(find_quantize_preset("Q4_K_M")->llama_ftype, 15u);
  EXPECT_EQ(find_quantize_preset("q5_k_m")->llama_ftype, 17u);
  EXPECT_EQ(find_quantize_preset("q4_k_s"), nullptr);
  EXPECT_EQ(find_quantize_preset("F32")->llama_ftype, 0u);
  EXPECT_EQ(find_quantize_preset("q8"), nullptr);
  EXPECT_EQ(find_quantize_preset("INT4-G32")->type, DType::kI4G32);
  EXPECT_EQ(find_quantize_preset("int4_g128")->llama_ftype, 1003u);
}

TEST(QuantizePresets, MixGivesMoreBitsToFirstAndLastEighthAndEveryThirdLayer) {
  std::vector<int> chosen;
  for (int i = 0; i < 32; ++i) {
    if (mixed_layer_gets_more_bits(i, 32)) chosen.push_back(i);
  }
  EXPECT_EQ(chosen, (std::vector<int>{0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31}));
}

TEST(QuantizeFallback, FollowsLlamaQuantizeTableThenF16) {
  EXPECT_EQ(fallback_type(DType::kQ4_K, 256), DType::kQ4_K);
  EXPECT_EQ(fallback_type(DType::kQ2_K, 64), DType::kQ4_0);
  EXPECT_EQ(fallback_type(DType::kQ3_K, 64), DType::kQ4_0);
  EXPECT_EQ(fallback_type(DType::kQ4_K, 64), DType::kQ5_0);
  EXPECT_EQ(fallback_type(DType::kQ5_K, 64), DType::kQ5_1);
  EXPECT_EQ(fallback_type(DType::kQ6_K, 64), DType::kQ8_0);
  EXPECT_EQ(fallback_type(DType::kQ6_K, 172), DType::kF16);
  EXPECT_EQ(fallback_type(DType::kQ8_0, 172), DType::kF16);
  EXPECT_EQ(fallback_type(DType::kBF16, 172), DType::kBF16);
  EXPECT_EQ(fallback_type(DType::kI4G128, 64), DType::kI4G32);
  EXPECT_EQ(fallback_type(DType::kI4G128, 32), DType::kF16);
  EXPECT_EQ(fallback_type(DType::kI8Row, 32), DType::kI8Row);
  EXPECT_EQ(fallback_type(DType::kF8Row, 172), DType::kF16);
}

TEST(QuantizeModel, SynthQ4KMGetsTheMixPerTensorAndKeepsMetadata) {
  TempFile in("synth_f32.gguf"), out("synth_q4_k_m.gguf");
  write_synth_f32(in.path());
  quantize_model(in.path(), out.path(), preset("q4_k_m"));

  const gguf::GgufFile source = gguf::GgufFile::open(in.path());
  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  EXPECT_EQ(file.get_int("general.file_type"), 15);
  EXPECT_EQ(file.get_int("general.quantization_version"), 2);
  EXPECT_EQ(file.get_string_array("tokenizer.ggml.tokens"),
            source.get_string_array("tokenizer.ggml.tokens"));
  EXPECT_EQ(file.get_int("llama.block_count"), 8);
  EXPECT_EQ(type_of(file, "output.weight"), DType::kQ6_K);
  EXPECT_EQ(type_of(file, "token_embd.weight"), DType::kQ4_K);
  EXPECT_EQ(type_of(file, "output_norm.weight"), DType::kF32);
  for (int i = 0; i < 8; ++i) {
    SCOPED_TRACE("layer " + std::to_string(i));
    const std::string p = "blk." + std::to_string(i) + ".";
    const DType more = (i == 0 || i == 3 || i == 6 || i == 7) ? DType::kQ6_K : DType::kQ4_K;
    EXPECT_EQ(type_of(file, p + "attn_v.weight"), more);
    EXPECT_EQ(type_of(file, p + "ffn_down.weight"), more);
    for (const char* name : {"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"}) {
      EXPECT_EQ(type_of(file, p + name + ".weight"), DType::kQ4_K) << name;
    }
    EXPECT_EQ(type_of(file, p + "attn_norm.weight"), DType::kF32);
    EXPECT_EQ(type_of(file, p + "ffn_norm.weight"), DType::kF32);
  }
}

TEST(QuantizeModel, Q5KMUsesQ5KAsItsBaseAndTiedEmbeddingsGetTheOutputType) {
  TempFile in("qwen_f32.gguf"), out("qwen_q5_k_m.gguf");
  write_synthetic_model({.shape = {.architecture = "qwen2",
                                   .n_embd = 256,
                                   .n_layer = 2,
                                   .n_head = 4,
                                   .n_head_kv = 2,
                                   .n_ff = 512,
                                   .n_vocab = 300,
                                   .n_ctx = 128,
                                   .tied_embeddings = true},
                         .weight_type = DType::kF32},
                        in.path());
  quantize_model(in.path(), out.path(), preset("q5_k_m"));
  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  EXPECT_EQ(file.get_int("general.file_type"), 17);
  EXPECT_EQ(type_of(file, "token_embd.weight"), DType::kQ6_K);
  // Two layers: n / 8 = 0 and 7 * n / 8 = 1, so only layer 1 gets more bits.
  EXPECT_EQ(type_of(file, "blk.0.attn_v.weight"), DType::kQ5_K);
  EXPECT_EQ(type_of(file, "blk.1.attn_v.weight"), DType::kQ6_K);
  EXPECT_EQ(type_of(file, "blk.0.attn_q.weight"), DType::kQ5_K);
  EXPECT_EQ(type_of(file, "blk.0.attn_q.bias"), DType::kF32);
}

// As llama-quantize without --pure: the output projection gets Q6_K under the types of fewer
// than 8 bits (Q8_0 where its rows are not whole super-blocks), the embeddings keep the type.
TEST(QuantizeModel, OutputProjectionGetsQ6KUnlessPureOrEightBits) {
  TempFile in("output_f32.gguf"), out("output_q.gguf");
  write_synth_f32(in.path(), 2);
  const auto output_type = [&](const char* name, bool pure) {
    quantize_model(in.path(), out.path(), preset(name), {.pure = pure});
    const gguf::GgufFile file = gguf::GgufFile::open(out.path());
    EXPECT_EQ(type_of(file, "token_embd.weight"), preset(name).type) << name;
    return type_of(file, "output.weight");
  };
  EXPECT_EQ(output_type("q4_0", false), DType::kQ6_K);
  EXPECT_EQ(output_type("int4_g32", false), DType::kQ6_K);
  EXPECT_EQ(output_type("q4_0", true), DType::kQ4_0);
  EXPECT_EQ(output_type("q8_0", false), DType::kQ8_0);
  EXPECT_EQ(output_type("int8", false), DType::kI8Row);
  EXPECT_EQ(output_type("f16", false), DType::kF16);
  // --pure turns a mix into its base type throughout, as llama-quantize --pure does.
  EXPECT_EQ(output_type("q4_k_m", true), DType::kQ4_K);
  EXPECT_EQ(type_of(gguf::GgufFile::open(out.path()), "blk.0.attn_v.weight"), DType::kQ4_K);
}

class QuantizedToEachPreset : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantizedToEachPreset, LoadsAndGenerates) {
  const QuantizePreset& p = preset(GetParam());
  TempFile in("each_f32.gguf"), out("each_" + GetParam() + ".gguf");
  write_synth_f32(in.path(), 2);
  const std::vector<TensorQuantization> plan = quantize_model(in.path(), out.path(), p);
  for (const TensorQuantization& t : plan) EXPECT_FALSE(t.fell_back_from) << t.name;

  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  EXPECT_EQ(file.get_int("general.file_type"), p.llama_ftype);
  EXPECT_EQ(type_of(file, "blk.0.attn_q.weight"), p.type);
  LLM llm(LLMOptions{.model = out.path().string(), .backend = "cpu", .threads = 2});
  EXPECT_EQ(llm.generate("Once upon a time", greedy(4)).tokens.size(), 4u);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, QuantizedToEachPreset, ::testing::ValuesIn([] {
                           std::vector<std::string> names;
                           for (const QuantizePreset& p : quantize_presets()) {
                             names.emplace_back(p.name);
                           }
                           return names;
                         }()));

TEST(QuantizeModel, ReQuantizesAQuantizedInputAndCopiesMatricesAlreadyInTheTargetType) {
  TempFile f32("rq_f32.gguf"), q8("rq_q8_0.gguf"), q8_again("rq_q8_0_again.gguf"),
      q4("rq_q4_0.gguf");
  write_synth_f32(f32.path(), 2);
  quantize_model(f32.path(), q8.path(), preset("q8_0"));

  const std::vector<TensorQuantization> same =
      quantize_model(q8.path(), q8_again.path(), preset("q8_0"));
  for (const TensorQuantization& t : same) EXPECT_FALSE(t.quantized) << t.name;
  const gguf::GgufFile a = gguf::GgufFile::open(q8.path());
  const gguf::GgufFile b = gguf::GgufFile::open(q8_again.path());
  const Tensor wa = a.tensor("blk.1.ffn_down.weight"), wb = b.tensor("blk.1.ffn_down.weight");
  EXPECT_EQ(std::memcmp(wa.materialize(), wb.materialize(), wa.nbytes()), 0);

  quantize_model(q8.path(), q4.path(), preset("q4_0"));
  const gguf::GgufFile c = gguf::GgufFile::open(q4.path());
  EXPECT_EQ(type_of(c, "blk.1.ffn_down.weight"), DType::kQ4_0);
  EXPECT_EQ(c.get_int("general.file_type"), 2);
}

TEST(QuantizeModel, RejectsMatricesOfTypesItCannotDecode) {
  TempFile in("iq.gguf"), out("iq_out.gguf");
  gguf::GgufWriter writer;
  writer.add_string("general.architecture", "llama");
  // IQ2_XXS (ggml type 16): 66 bytes per 256 elements, a type GGUF holds but Baton cannot read.
  const std::vector<std::byte> bytes(2 * 66);
  writer.add_tensor("blk.0.attn_q.weight", {2, 256}, uint32_t{16}, bytes);
  writer.write(in.path());
  try {
    quantize_model(in.path(), out.path(), preset("q8_0"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("blk.0.attn_q.weight"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(out.path()));
}

TEST(QuantizeModel, FailsBeforeWorkWhenTheOutputFolderIsMissing) {
  try {
    quantize_model(testing::demo_model(), "/nonexistent-baton-dir/out.gguf", preset("q8_0"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kIo);
    EXPECT_NE(std::string(e.what()).find("/nonexistent-baton-dir/out.gguf"), std::string::npos);
  }
}

// stories260K's shape with the demo model's vocabulary: rows of 64 (dim) and 172 (ffn_down's,
// the ffn width), neither a whole K-quant super-block, and 172 not even a whole block of 32.
TEST(QuantizeModel, RowsOf64And172FallBackPerTensorAndGenerate) {
  TempFile in("rows_f32.gguf"), out("rows_q4_k_m.gguf");
  const SyntheticShape stories_shape{
      .n_embd = 64, .n_layer = 5, .n_head = 8, .n_head_kv = 4, .n_ff = 172, .n_vocab = 2048};
  write_synthetic_model(
      {.shape = stories_shape, .weight_type = DType::kF32, .vocab_from = testing::demo_model()},
      in.path());
  const std::vector<TensorQuantization> plan =
      quantize_model(in.path(), out.path(), preset("q4_k_m"));
  std::map<std::string, const TensorQuantization*> by_name;
  for (const TensorQuantization& t : plan) by_name[t.name] = &t;

  const TensorQuantization& output = *by_name.at("output.weight");
  EXPECT_EQ(output.fell_back_from, DType::kQ6_K);
  EXPECT_EQ(output.to, DType::kQ8_0);
  const TensorQuantization& q = *by_name.at("blk.2.attn_q.weight");
  EXPECT_EQ(q.fell_back_from, DType::kQ4_K);
  EXPECT_EQ(q.to, DType::kQ5_0);
  // 5 layers: n / 8 = 0 and 7 * n / 8 = 4, so layers 2 and 4 get Q6_K; both fall back to F16.
  EXPECT_EQ(by_name.at("blk.0.ffn_down.weight")->fell_back_from, DType::kQ4_K);
  EXPECT_EQ(by_name.at("blk.2.ffn_down.weight")->fell_back_from, DType::kQ6_K);
  EXPECT_EQ(by_name.at("blk.4.attn_v.weight")->fell_back_from, DType::kQ6_K);
  EXPECT_EQ(by_name.at("blk.4.attn_v.weight")->to, DType::kQ8_0);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(by_name.at("blk." + std::to_string(i) + ".ffn_down.weight")->to, DType::kF16);
  }
  EXPECT_FALSE(by_name.at("blk.0.attn_norm.weight")->fell_back_from);
  EXPECT_FALSE(by_name.at("blk.0.attn_norm.weight")->quantized);

  const gguf::GgufFile file = gguf::GgufFile::open(out.path());
  EXPECT_EQ(type_of(file, "blk.2.attn_q.weight"), DType::kQ5_0);
  EXPECT_EQ(file.get_int("general.file_type"), 15);
  LLM llm(LLMOptions{.model = out.path().string(), .backend = "cpu", .threads = 2});
  const GenerationOutput o = llm.generate("In the beginning", greedy(16));
  EXPECT_EQ(o.tokens.size(), 16u);
  EXPECT_FALSE(o.text.empty());
}

// Q8_0 keeps the demo model's greedy continuation: every token of the F16 model's continuation
// (teacher-forced through the Q8_0 model) keeps its log-probability within kLogprobDrift. Q8_0
// rounds each weight by at most half of max|x|/127 of its block and its kernels round activations
// to int8 as well: the drift measured over these 36 steps is 0.016 at most, 0.012 but for one
// step. A wrong scale or a misplaced block moves these log-probabilities by whole units.
constexpr double kLogprobDrift = 0.05;

TEST(QuantizeModel, DemoModelQ8_0StaysCloseToF16) {
  const std::filesystem::path demo = testing::demo_model();
  TempFile out("demo_q8_0.gguf");
  quantize_model(demo, out.path(), preset("q8_0"));

  LLM f16(LLMOptions{.model = demo.string(), .backend = "cpu", .threads = 2});
  LLM q8(LLMOptions{.model = out.path().string(), .backend = "cpu", .threads = 2});
  for (const char* prompt : {"In the beginning", "And God said", "Jesus wept"}) {
    SCOPED_TRACE(prompt);
    const GenerationOutput reference = f16.generate(prompt, greedy(12, 1));
    std::vector<Request> forced;
    std::vector<int32_t> history = reference.prompt_tokens;
    for (int32_t token : reference.tokens) {
      forced.push_back({.params = greedy(1, 5), .prompt_tokens = history});
      history.push_back(token);
    }
    const std::vector<GenerationOutput> steps = q8.generate(forced);
    ASSERT_EQ(steps.size(), reference.tokens.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      const TokenLogprob& f = reference.completions.at(0).logprobs.at(i).chosen;
      const std::vector<TokenLogprob>& top = steps[i].completions.at(0).logprobs.at(0).top;
      const auto q = std::ranges::find(top, f.token, &TokenLogprob::token);
      ASSERT_NE(q, top.end()) << "step " << i << ": the F16 pick left the Q8_0 top " << top.size();
      EXPECT_NEAR(q->logprob, f.logprob, kLogprobDrift) << "step " << i;
    }
    // The first tokens agree outright.
    const GenerationOutput quantized = q8.generate(prompt, greedy(4));
    EXPECT_EQ(quantized.tokens,
              std::vector<int32_t>(reference.tokens.begin(), reference.tokens.begin() + 4));
  }
}

}  // namespace
}  // namespace baton
