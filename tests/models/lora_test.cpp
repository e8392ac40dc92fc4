// LoRA adapters on real models: applied at run time they give what the merged model gives,
// requests with different adapters batch together, and bad adapters fail with clear errors.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <tuple>

#include "backends/cpu/cpu_backend.h"
#include "baton/error.h"
#include "baton/llm.h"
#include "core/engine/engine.h"
#include "core/gguf/gguf_file.h"
#include "core/tokenizer/tokenizer.h"
#include "models/hf_import/rotary_rows.h"
#include "models/lora/merge_lora.h"
#include "models/lora/synthetic_lora.h"
#include "models/model_config.h"
#include "models/quantize_model.h"
#include "tests/models/greedy_params.h"
#include "tests/models/hf_import/safetensors_writer.h"
#include "tests/temp_file.h"
#include "tests/test_data.h"

namespace baton {
namespace {

using testing::greedy;
using testing::TempDir;
using testing::TempFile;

ModelConfig config_of(const std::filesystem::path& model) {
  return read_model_config(gguf::GgufFile::open(model));
}

// The demo model with f32 weights: f32 weights take the same kernel at every batch size, so a
// request's tokens do not depend on what it was batched with, and a merged copy keeps f32.
class DemoF32 {
 public:
  DemoF32() : file_("lora_demo_f32.gguf") {
    quantize_model(testing::demo_model(), file_.path(), *find_quantize_preset("f32"),
                   {.threads = 1, .pure = true});
  }
  const std::filesystem::path& path() const { return file_.path(); }

 private:
  TempFile file_;
};

GenerationParams with_logprobs(const std::string& lora, int32_t max_tokens = 24) {
  GenerationParams p = greedy(max_tokens);
  p.logprobs = 5;
  p.ignore_eos = true;
  p.lora = lora;
  return p;
}

// Greedy tokens equal, and every reported log-probability (the log-softmax of the logits) within
// 2e-3: the merged weights round W + b·a to f32 once, the run-time path adds b·(a·x) to W·x.
void expect_same_generation(const GenerationOutput& a, const GenerationOutput& b) {
  ASSERT_EQ(a.tokens, b.tokens);
  ASSERT_EQ(a.completions[0].logprobs.size(), b.completions[0].logprobs.size());
  for (size_t i = 0; i < a.completions[0].logprobs.size(); ++i) {
    const TokenLogprobs& x = a.completions[0].logprobs[i];
    const TokenLogprobs& y = b.completions[0].logprobs[i];
    EXPECT_NEAR(x.chosen.logprob, y.chosen.logprob, 2e-3) << "token " << i;
    for (size_t j = 0; j < std::min(x.top.size(), y.top.size()); ++j) {
      EXPECT_NEAR(x.top[j].logprob, y.top[j].logprob, 2e-3) << "token " << i << " top " << j;
    }
  }
}

void check_adapter_matches_merged(const std::filesystem::path& model, const std::string& prompt) {
  const ModelConfig config = config_of(model);
  TempFile adapter("lora_adapter.gguf"), merged("lora_merged.gguf");
  write_gguf_lora(adapter.path(), config.architecture, random_lora(config, 8, 7), 16.0f);
  LoraAdapter read = read_lora_adapter(adapter.path(), config);
  merge_lora(model, {read}, merged.path());

  LLM with_adapter(LLMOptions{
      .model = model.string(), .threads = 2, .lora = {{.name = "bible", .path = adapter.str()}}});
  LLM baked(LLMOptions{.model = merged.str(), .threads = 2});
  const GenerationOutput adapted = with_adapter.generate(prompt, with_logprobs("bible"));
  const GenerationOutput base = with_adapter.generate(prompt, with_logprobs(""));
  expect_same_generation(adapted, baked.generate(prompt, with_logprobs("")));
  EXPECT_NE(adapted.tokens, base.tokens) << "the adapter should change what the model says";
}

TEST(Lora, DemoModelAdapterMatchesTheMergedModel) {
  const DemoF32 demo;
  check_adapter_matches_merged(demo.path(), "In the beginning");
}

TEST(Lora, Stories260KAdapterMatchesTheMergedModel) {
  const std::filesystem::path model = testing::shared_model("stories260K.gguf");
  BATON_REQUIRE_SHARED_FILE(model);
  check_adapter_matches_merged(model, "Once upon a time");
}

// Four adapters and the base model in one batch: each request gets what it gets alone.
TEST(Lora, AMixedBatchGivesEachRequestWhatItGetsAlone) {
  const DemoF32 demo;
  const ModelConfig config = config_of(demo.path());
  TempDir dir("lora_mixed");
  LLMOptions options{.model = demo.path().string(), .threads = 2, .max_loras = 4};
  for (int i = 0; i < 4; ++i) {
    const std::filesystem::path path = dir.path() / ("a" + std::to_string(i) + ".gguf");
    write_gguf_lora(path, config.architecture, random_lora(config, 4 + 4 * i, 100 + i), 8.0f);
    options.lora.push_back({.name = "a" + std::to_string(i), .path = path.string()});
  }
  LLM llm(options);
  std::vector<Request> batch;
  for (const std::string name : {"a0", "", "a1", "a2", "a3"}) {
    batch.push_back({.prompt = "And God said", .params = with_logprobs(name, 16)});
  }
  const std::vector<GenerationOutput> together = llm.generate(batch);
  std::set<std::vector<int32_t>> distinct;
  for (size_t i = 0; i < batch.size(); ++i) {
    const GenerationOutput alone = llm.generate(std::vector<Request>{batch[i]}).front();
    expect_same_generation(together[i], alone);
    distinct.insert(alone.tokens);
  }
  EXPECT_GE(distinct.size(), 4u) << "different adapters should say different things";
}

// With one slot, requests for a second adapter wait for the first adapter's requests to end,
// and all finish with what they get alone.
TEST(Lora, RequestsWaitForASlotWithoutChangingTheirOutput) {
  const DemoF32 demo;
  const ModelConfig config = config_of(demo.path());
  TempFile first("lora_first.gguf"), second("lora_second.gguf");
  write_gguf_lora(first.path(), config.architecture, random_lora(config, 4, 1), 4.0f);
  write_gguf_lora(second.path(), config.architecture, random_lora(config, 4, 2), 4.0f);
  LLM llm(LLMOptions{
      .model = demo.path().string(),
      .threads = 2,
      .lora = {{.name = "first", .path = first.str()}, {.name = "second", .path = second.str()}},
      .max_loras = 1});
  std::vector<Request> batch;
  for (const std::string name : {"first", "second", "", "first", "second"}) {
    batch.push_back({.prompt = "Let there be", .params = with_logprobs(name, 12)});
  }
  const std::vector<GenerationOutput> together = llm.generate(batch);
  for (size_t i = 0; i < batch.size(); ++i) {
    expect_same_generation(together[i], llm.generate(std::vector<Request>{batch[i]}).front());
  }
}

TEST(Lora, ThePrefixCacheKeepsAdaptersApart) {
  const DemoF32 demo;
  const ModelConfig config = config_of(demo.path());
  TempFile adapter("lora_prefix.gguf");
  write_gguf_lora(adapter.path(), config.architecture, random_lora(config, 4, 3), 4.0f);
  LLM llm(LLMOptions{
      .model = demo.path().string(), .threads = 2, .lora = {{.name = "a", .path = adapter.str()}}});
  const std::string prompt(testing::kGenesis, 300);
  EXPECT_EQ(llm.generate(prompt, with_logprobs("a", 2)).metrics.cached_prompt_tokens, 0);
  EXPECT_EQ(llm.generate(prompt, with_logprobs("", 2)).metrics.cached_prompt_tokens, 0)
      << "the base model must not reuse the adapter's K/V";
  EXPECT_GT(llm.generate(prompt, with_logprobs("a", 2)).metrics.cached_prompt_tokens, 0);
}

// An adapter removed while a request for it waits for a slot: the request still runs with it.
TEST(Lora, ARequestWaitingForASlotKeepsItsAdapterWhenTheNameIsRemoved) {
  const DemoF32 demo;
  const gguf::GgufFile file = gguf::GgufFile::open(demo.path());
  const std::unique_ptr<Backend> backend = make_cpu_backend({.threads = 1});
  const std::unique_ptr<Model> model = load_model(file, *backend);
  const std::unique_ptr<Tokenizer> tokenizer = Tokenizer::create(vocabulary_from_gguf(file));
  std::vector<std::shared_ptr<const LoraAdapter>> adapters;
  TempFile first("lora_engine_first.gguf"), second("lora_engine_second.gguf");
  for (const auto& [file_of, name, seed] :
       {std::tuple{&first, "first", 11u}, std::tuple{&second, "second", 12u}}) {
    write_gguf_lora(file_of->path(), model->config().architecture,
                    random_lora(model->config(), 4, seed), 4.0f);
    auto adapter =
        std::make_shared<LoraAdapter>(read_lora_adapter(file_of->path(), model->config()));
    adapter->name = name;
    adapters.push_back(std::move(adapter));
  }
  EngineConfig config{.n_blocks = 64, .max_loras = 1, .lora_adapters = adapters};
  const auto run = [&](std::vector<std::string> names, bool remove_second) {
    Engine engine(*model, *backend, *tokenizer, config);
    GenerationParams params = greedy(6);
    params.ignore_eos = true;
    std::map<uint64_t, std::vector<int32_t>> tokens;
    for (const std::string& name : names) {
      params.lora = name;
      tokens[engine.add(tokenizer->encode("And God said", true, false), params)];
    }
    if (remove_second) engine.remove_lora("second");
    while (engine.has_work()) {
      for (const SequenceUpdate& u : engine.step()) {
        EXPECT_TRUE(u.error.empty()) << u.error;
        tokens[u.id].insert(tokens[u.id].end(), u.new_tokens.begin(), u.new_tokens.end());
      }
    }
    std::vector<std::vector<int32_t>> out;
    for (const auto& [id, t] : tokens) out.push_back(t);
    return out;
  };
  const std::vector<std::vector<int32_t>> removed = run({"first", "second"}, true);
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_EQ(removed[1], run({"second"}, false)[0]);
  EXPECT_EQ(removed[1].size(), 6u);
}

// A PEFT directory and the GGUF adapter llama.cpp would convert it to are the same adapter:
// GGUF keeps a Llama's q and k rows interleaved per head, PEFT in transformers' order.
TEST(Lora, APeftDirectoryReadsAsItsGgufConversion) {
  const ModelConfig config = config_of(testing::demo_model());
  const std::vector<LoraPair> pairs = random_lora(config, 4, 9);
  TempFile gguf_file("lora_peft_twin.gguf");
  write_gguf_lora(gguf_file.path(), config.architecture, pairs, 8.0f);
  TempDir peft("lora_peft");
  const std::map<std::string, std::string> modules = {
      {"attn_q", "self_attn.q_proj"}, {"attn_k", "self_attn.k_proj"},
      {"attn_v", "self_attn.v_proj"}, {"attn_output", "self_attn.o_proj"},
      {"ffn_gate", "mlp.gate_proj"},  {"ffn_up", "mlp.up_proj"},
      {"ffn_down", "mlp.down_proj"}};
  std::vector<testing::SafetensorsEntry> entries;
  for (const LoraPair& p : pairs) {
    const size_t first_dot = p.weight.find('.', 4), kind_end = p.weight.rfind('.');
    const std::string layer = p.weight.substr(4, first_dot - 4);
    const std::string kind = p.weight.substr(first_dot + 1, kind_end - first_dot - 1);
    std::vector<float> b = p.b;
    if (kind == "attn_q" || kind == "attn_k") {
      for (int64_t row = 0; row < p.out; ++row) {
        const int64_t source = hf::rotate_half_source_row(row, config.head_dim);
        std::copy_n(p.b.begin() + row * p.rank, p.rank, b.begin() + source * p.rank);
      }
    }
    const std::string name = "base_model.model.model.layers." + layer + "." + modules.at(kind);
    entries.push_back(testing::f32_entry(name + ".lora_A.weight", {p.rank, p.in}, p.a));
    entries.push_back(testing::f32_entry(name + ".lora_B.weight", {p.out, p.rank}, b));
  }
  testing::write_safetensors(peft.path() / "adapter_model.safetensors", entries);
  std::ofstream(peft.path() / "adapter_config.json")
      << R"({"peft_type": "LORA", "r": 4, "lora_alpha": 8, "target_modules": ["q_proj"]})";

  const LoraAdapter from_gguf = read_lora_adapter(gguf_file.path(), config);
  const LoraAdapter from_peft = read_lora_adapter(peft.path(), config);
  ASSERT_EQ(from_gguf.targets.size(), from_peft.targets.size());
  for (const auto& [node, target] : from_gguf.targets) {
    const LoraTarget& other = from_peft.targets.at(node);
    for (const auto& [x, y] : {std::pair{target.a, other.a}, std::pair{target.b, other.b}}) {
      ASSERT_EQ(x.shape(), y.shape()) << node;
      for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(x.data<float>()[i], y.data<float>()[i]);
    }
  }

  // The GGUF adapter is scaled by alpha / r = 2. rsLoRA scales by alpha / sqrt(r) = 4, and an
  // alpha_pattern entry gives q_proj an alpha of 2 (scale 1).
  std::ofstream(peft.path() / "adapter_config.json")
      << R"({"r": 4, "lora_alpha": 8, "use_rslora": true, "alpha_pattern": {"q_proj": 2}})";
  const LoraAdapter rs = read_lora_adapter(peft.path(), config);
  EXPECT_FLOAT_EQ(rs.targets.at("blk.0.v").b.data<float>()[0],
                  from_gguf.targets.at("blk.0.v").b.data<float>()[0] / 2 * 4);
  EXPECT_FLOAT_EQ(rs.targets.at("blk.0.q").b.data<float>()[0],
                  from_gguf.targets.at("blk.0.q").b.data<float>()[0] / 2);
}

// The message of what `action` throws; empty when it throws nothing.
template <typename F>
std::string error_of(F action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Lora, BadAdaptersFailWithAClearError) {
  const ModelConfig config = config_of(testing::demo_model());
  TempFile file("lora_bad.gguf");
  std::vector<LoraPair> pairs = random_lora(config, 4, 5);

  pairs[3].in += 1;
  pairs[3].a.resize(static_cast<size_t>(pairs[3].rank * pairs[3].in));
  write_gguf_lora(file.path(), config.architecture, pairs, 8.0f);
  EXPECT_NE(error_of([&] { read_lora_adapter(file.path(), config); }).find(pairs[3].weight),
            std::string::npos);

  pairs = random_lora(config, 4, 5);
  pairs.push_back({"token_embd.weight", std::vector<float>(4 * config.n_embd),
                   std::vector<float>(4 * config.n_vocab), 4, config.n_embd, config.n_vocab});
  write_gguf_lora(file.path(), config.architecture, pairs, 8.0f);
  EXPECT_NE(error_of([&] { read_lora_adapter(file.path(), config); }).find("embeddings"),
            std::string::npos);

  write_gguf_lora(file.path(), "qwen2", random_lora(config, 4, 5), 8.0f);
  EXPECT_NE(error_of([&] { read_lora_adapter(file.path(), config); }).find("qwen2"),
            std::string::npos);

  EXPECT_NE(error_of([&] {
              read_lora_adapter(testing::demo_model(), config);
            }).find("not a GGUF LoRA adapter"),
            std::string::npos);

  write_gguf_lora(file.path(), config.architecture, random_lora(config, 4, 5), 8.0f);
  std::filesystem::resize_file(file.path(), std::filesystem::file_size(file.path()) / 2);
  EXPECT_THROW(read_lora_adapter(file.path(), config), Error);

  TempDir empty("lora_empty_peft");
  EXPECT_NE(
      error_of([&] { read_lora_adapter(empty.path(), config); }).find("no adapter_config.json"),
      std::string::npos);
}

TEST(Lora, TheEngineRefusesAnAdapterAboveTheRankLimitAndAnUnknownName) {
  const ModelConfig config = config_of(testing::demo_model());
  TempFile file("lora_rank.gguf");
  write_gguf_lora(file.path(), config.architecture, random_lora(config, 32, 5), 8.0f);
  const std::string path = testing::demo_model().string();
  EXPECT_NE(error_of([&] {
              LLM(LLMOptions{.model = path, .lora = {{.name = "big", .path = file.str()}}});
            }).find("--max-lora-rank"),
            std::string::npos);
  LLM llm(LLMOptions{
      .model = path, .lora = {{.name = "big", .path = file.str()}}, .max_lora_rank = 32});
  EXPECT_NE(error_of([&] {
              llm.generate("In", with_logprobs("missing", 1));
            }).find("no LoRA adapter named 'missing'"),
            std::string::npos);
  EXPECT_EQ(llm.generate("In", with_logprobs("big", 2)).tokens.size(), 2u);
}

}  // namespace
}  // namespace baton
