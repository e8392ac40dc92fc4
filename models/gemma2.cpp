#include "models/gemma2.h"

#include <cmath>

#include "baton/error.h"
#include "models/decoder_model.h"
#include "models/model_config.h"

namespace baton {
namespace {

constexpr const char* kArch = "gemma2";

struct Gemma2Layer {
  DecoderLayerWeights w;
  Tensor attn_post_norm, ffn_post_norm;
};

class Gemma2Model final : public Model {
 public:
  // `layers` are the shard's; `config` is the shard's (ShardLayout::local).
  Gemma2Model(Backend& backend, ModelConfig config, EmbeddingWeights embeddings,
              std::vector<Gemma2Layer> layers, const ModelShard& shard)
      : backend_(backend),
        config_(std::move(config)),
        embeddings_(std::move(embeddings)),
        layers_(std::move(layers)),
        shard_(shard) {}

  const ModelConfig& config() const override { return config_; }
  const ModelShard& shard() const override { return shard_; }

  Tensor build_step(Graph& graph, const StepInput& input, const KvTensors& kv) const override {
    StepGraph g(graph, backend_, config_, input, kv, shard_);
    Tensor x = input.hidden
                   ? *input.hidden
                   : g.scale(g.embed(embeddings_.token_embd, "token_embd"),
                             std::sqrt(static_cast<float>(config_.n_embd)), "token_embd_scaled");
    for (int32_t i = shard_.first_layer; i < shard_.layer_end(config_.n_layer); ++i) {
      x = layer(g, x, layers_[static_cast<size_t>(i - shard_.first_layer)], i);
    }
    if (!shard_.last_stage(config_.n_layer)) return x;
    return g.logits(x, embeddings_.output_norm, embeddings_.output);
  }

 private:
  static Tensor layer(StepGraph& g, const Tensor& x, const Gemma2Layer& l, int32_t i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    const Tensor attn = g.self_attention(g.norm(x, l.w.attn_norm, p + "attn_norm"), l.w.attn, i, p);
    const Tensor mid =
        g.add(x, g.norm(attn, l.attn_post_norm, p + "attn_post_norm"), p + "attn_residual");
    const Tensor ffn =
        g.gated_ffn(g.norm(mid, l.w.ffn_norm, p + "ffn_norm"), l.w.ffn, GateActivation::kGelu, p);
    return g.add(mid, g.norm(ffn, l.ffn_post_norm, p + "ffn_post_norm"), p + "ffn_residual");
  }

  Backend& backend_;
  ModelConfig config_;
  EmbeddingWeights embeddings_;
  std::vector<Gemma2Layer> layers_;
  ModelShard shard_;
};

std::string key(const std::string& suffix) {
  return std::string(kArch) + "." + suffix;
}

// Which layers use the sliding window: a bool per layer, or a period n whose last layer in each
// n is global, as llama.cpp reads the key for other families. Its gemma2 ignores the key and
// always takes 2 (the even layers local), which is also the default here.
std::vector<bool> sliding_window_layers(const gguf::GgufFile& file, int32_t n_layer) {
  const std::string pattern_key = key("attention.sliding_window_pattern");
  const gguf::Value* pattern = file.find(pattern_key);
  std::vector<bool> layers(static_cast<size_t>(n_layer));
  if (pattern && pattern->type == gguf::ValueType::kArray) {
    const auto& items = std::get<gguf::Array>(pattern->data).items;
    if (items.size() != layers.size() ||
        std::get<gguf::Array>(pattern->data).element_type != gguf::ValueType::kBool) {
      throw Error(ErrorCategory::kInvalidModel, file.path().filename().string() + ": " +
                                                    pattern_key + " must hold one bool per layer");
    }
    for (size_t i = 0; i < items.size(); ++i) layers[i] = std::get<bool>(items[i].data);
    return layers;
  }
  const int64_t period = pattern ? file.get_int(pattern_key) : 2;
  if (period < 0) {
    throw Error(ErrorCategory::kInvalidModel,
                file.path().filename().string() + ": " + pattern_key + " must not be negative");
  }
  for (int32_t i = 0; i < n_layer; ++i) layers[i] = period == 0 || i % period < period - 1;
  return layers;
}

ModelConfig read_config(const gguf::GgufFile& file) {
  ModelConfig c = read_model_config(file);
  c.rope.mode = RopeMode::kNeox;
  const auto positive = [&file](const std::string& name, double fallback) {
    const double value = file.find_float(name).value_or(fallback);
    if (!(value > 0.0) || !std::isfinite(value)) {
      throw Error(ErrorCategory::kInvalidModel, file.path().filename().string() + ": " + name +
                                                    " = " + std::to_string(value) +
                                                    " must be positive and finite");
    }
    return static_cast<float>(value);
  };
  // Defaults are Gemma 2's published values, as llama.cpp assumes them.
  c.attn_softcap = positive(key("attn_logit_softcapping"), 50.0);
  c.final_softcap = positive(key("final_logit_softcapping"), 30.0);
  const int64_t window = file.find_int(key("attention.sliding_window")).value_or(4096);
  if (window <= 0 || window > (int64_t{1} << 30)) {
    throw Error(ErrorCategory::kInvalidModel, file.path().filename().string() + ": " +
                                                  key("attention.sliding_window") + " = " +
                                                  std::to_string(window) + " is out of range");
  }
  c.sliding_window = static_cast<int32_t>(window);
  c.swa_layers = sliding_window_layers(file, c.n_layer);
  // Query scaling: attention.scale, a Baton key (its HF import writes it from
  // query_pre_attn_scalar), when present; otherwise llama.cpp's rule, which follows Gemma's
  // reference code: 1/sqrt(n_embd / n_head) for the 27B model (46 layers, whose
  // query_pre_attn_scalar is that), 1/sqrt(head_dim) for the others.
  const bool is_27b = c.n_layer == 46;
  c.attn_scale =
      positive(key("attention.scale"), 1.0 / std::sqrt(is_27b ? c.n_embd / c.n_head : c.head_dim));
  return c;
}

}  // namespace

std::unique_ptr<Model> load_gemma2(const gguf::GgufFile& file, Backend& backend,
                                   const ModelShard& shard) {
  ModelConfig config = read_config(file);
  const WeightLoader load(file, backend);
  config.n_vocab = static_cast<int32_t>(load.shape_2d("token_embd.weight")[0]);
  const ShardLayout layout = shard_layout(config, shard);
  EmbeddingWeights embeddings = load.embeddings(config.n_vocab, config.n_embd, layout.vocab_rows);
  std::vector<Gemma2Layer> layers;
  for (int32_t i = shard.first_layer; i < shard.layer_end(config.n_layer); ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    layers.push_back(
        {.w = load_decoder_layer(load, config, layout, i),
         .attn_post_norm = load.get_f32(p + "post_attention_norm.weight", {config.n_embd}),
         .ffn_post_norm = load.get_f32(p + "post_ffw_norm.weight", {config.n_embd})});
  }
  return std::make_unique<Gemma2Model>(backend, layout.local, std::move(embeddings),
                                       std::move(layers), shard);
}

}  // namespace baton
