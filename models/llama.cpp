#include "models/llama.h"

#include <optional>

#include "baton/error.h"
#include "models/model_config.h"
#include "models/step_graph.h"
#include "models/weight_loader.h"

namespace baton {
namespace {

struct LayerWeights {
  Tensor attn_norm, wq, wk, wv, wo;
  std::optional<Tensor> bq, bk, bv;
  Tensor ffn_norm;
  GatedFfnWeights ffn;
};

class LlamaModel final : public Model {
 public:
  LlamaModel(const gguf::GgufFile& file, Backend& backend, const LlamaVariant& variant)
      : backend_(backend) {
    config_ = read_model_config(file);
    config_.rope.mode = variant.rope_mode;
    const WeightLoader load(file, backend);
    config_.n_vocab = static_cast<int32_t>(load.shape_2d("token_embd.weight")[0]);
    load_weights(load, variant);
  }

  const ModelConfig& config() const override { return config_; }

  Tensor build_step(Graph& graph, const StepInput& input, const KvTensors& kv) const override;

 private:
  void load_weights(const WeightLoader& load, const LlamaVariant& variant);
  Tensor attention_block(StepGraph& g, const Tensor& x, const LayerWeights& w, int32_t layer) const;

  Backend& backend_;
  ModelConfig config_;
  Tensor token_embd_, output_norm_, output_;
  std::vector<LayerWeights> layers_;
};

void LlamaModel::load_weights(const WeightLoader& load, const LlamaVariant& variant) {
  const gguf::GgufFile& file = load.file();
  const int64_t embd = config_.n_embd;
  const int64_t q_dim = int64_t{config_.n_head} * config_.head_dim;
  const int64_t kv_dim = int64_t{config_.n_head_kv} * config_.head_dim;
  token_embd_ = load.get("token_embd.weight", {config_.n_vocab, embd});
  output_norm_ = load.get_f32("output_norm.weight", {embd});
  // Models with tied embeddings (stories260K's llama2.c export, Qwen2-0.5B) have no output.weight.
  output_ = file.find_tensor("output.weight") ? load.get("output.weight", {config_.n_vocab, embd})
                                              : token_embd_;
  if (file.find_tensor("rope_freqs.weight")) {
    // Read on the host: the factors become op parameters, not a device tensor.
    const Tensor factors = file.tensor("rope_freqs.weight");
    if (factors.dtype() != DType::kF32 || factors.shape() != Shape{config_.rope.n_rot / 2}) {
      throw Error(ErrorCategory::kInvalidModel, file.path().filename().string() +
                                                    ": rope_freqs.weight must be f32 [" +
                                                    std::to_string(config_.rope.n_rot / 2) + "]");
    }
    config_.rope.freq_factors.assign(factors.data<float>(),
                                     factors.data<float>() + factors.numel());
  }
  for (int32_t i = 0; i < config_.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights w;
    w.attn_norm = load.get_f32(p + "attn_norm.weight", {embd});
    w.wq = load.get(p + "attn_q.weight", {q_dim, embd});
    w.wk = load.get(p + "attn_k.weight", {kv_dim, embd});
    w.wv = load.get(p + "attn_v.weight", {kv_dim, embd});
    w.wo = load.get(p + "attn_output.weight", {embd, q_dim});
    w.bq = load.find_f32(p + "attn_q.bias", {q_dim});
    w.bk = load.find_f32(p + "attn_k.bias", {kv_dim});
    w.bv = load.find_f32(p + "attn_v.bias", {kv_dim});
    if (variant.qkv_bias && !(w.bq && w.bk && w.bv)) {
      throw Error(ErrorCategory::kInvalidModel, file.path().filename().string() + ": " +
                                                    config_.architecture + " layer " +
                                                    std::to_string(i) + " lacks q/k/v biases");
    }
    w.ffn_norm = load.get_f32(p + "ffn_norm.weight", {embd});
    w.ffn.gate = load.get(p + "ffn_gate.weight", {config_.n_ff, embd});
    w.ffn.up = load.get(p + "ffn_up.weight", {config_.n_ff, embd});
    w.ffn.down = load.get(p + "ffn_down.weight", {embd, config_.n_ff});
    layers_.push_back(std::move(w));
  }
}

Tensor LlamaModel::attention_block(StepGraph& g, const Tensor& x, const LayerWeights& w,
                                   int32_t layer) const {
  const std::string p = "blk." + std::to_string(layer) + ".";
  const Tensor h = g.norm(x, w.attn_norm, p + "attn_norm");
  const Tensor q =
      g.rope(g.split_heads(g.linear(h, w.wq, w.bq, p + "q"), config_.n_head), p + "rope_q");
  const Tensor k =
      g.rope(g.split_heads(g.linear(h, w.wk, w.bk, p + "k"), config_.n_head_kv), p + "rope_k");
  const Tensor v = g.split_heads(g.linear(h, w.wv, w.bv, p + "v"), config_.n_head_kv);
  const Tensor out =
      g.linear(g.attention(q, k, v, layer, p), w.wo, std::nullopt, p + "attn_output");
  return g.add(x, out, p + "attn_residual");
}

Tensor LlamaModel::build_step(Graph& graph, const StepInput& input, const KvTensors& kv) const {
  StepGraph g(graph, backend_, config_, input, kv);
  Tensor x = g.embed(token_embd_, "token_embd");
  for (int32_t layer = 0; layer < config_.n_layer; ++layer) {
    const LayerWeights& w = layers_[layer];
    const std::string p = "blk." + std::to_string(layer) + ".";
    x = attention_block(g, x, w, layer);
    const Tensor ffn = g.swiglu_ffn(g.norm(x, w.ffn_norm, p + "ffn_norm"), w.ffn, p);
    x = g.add(x, ffn, p + "ffn_residual");
  }
  return g.logits(x, output_norm_, output_);
}

}  // namespace

std::unique_ptr<Model> load_llama(const gguf::GgufFile& file, Backend& backend,
                                  const LlamaVariant& variant) {
  return std::make_unique<LlamaModel>(file, backend, variant);
}

}  // namespace baton
