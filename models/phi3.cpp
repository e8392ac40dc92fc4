#include "models/phi3.h"

#include "baton/error.h"
#include "models/model_config.h"
#include "models/step_graph.h"
#include "models/weight_loader.h"

namespace baton {
namespace {

struct Phi3Layer {
  Tensor attn_norm, wq, wk, wv, wo, ffn_norm;
  GatedFfnWeights ffn;
};

class Phi3Model final : public Model {
 public:
  Phi3Model(const gguf::GgufFile& file, Backend& backend) : backend_(backend) {
    for (const char* factors : {"rope_factors_long.weight", "rope_factors_short.weight"}) {
      if (file.find_tensor(factors)) {
        throw Error(ErrorCategory::kUnsupported,
                    file.path().filename().string() + ": phi3 LongRoPE (" + factors +
                        ", the 128k-context models) is not implemented yet");
      }
    }
    config_ = read_model_config(file);
    config_.rope.mode = RopeMode::kNeox;
    const WeightLoader load(file, backend);
    config_.n_vocab = static_cast<int32_t>(load.shape_2d("token_embd.weight")[0]);
    load_weights(load);
  }

  const ModelConfig& config() const override { return config_; }

  Tensor build_step(Graph& graph, const StepInput& input, const KvTensors& kv) const override {
    StepGraph g(graph, backend_, config_, input, kv);
    Tensor x = g.embed(token_embd_, "token_embd");
    for (int32_t layer = 0; layer < config_.n_layer; ++layer) {
      const Phi3Layer& w = layers_[layer];
      const std::string p = "blk." + std::to_string(layer) + ".";
      const Tensor h = g.norm(x, w.attn_norm, p + "attn_norm");
      const Tensor q = g.rope(
          g.split_heads(g.linear(h, w.wq, std::nullopt, p + "q"), config_.n_head), p + "rope_q");
      const Tensor k = g.rope(
          g.split_heads(g.linear(h, w.wk, std::nullopt, p + "k"), config_.n_head_kv), p + "rope_k");
      const Tensor v = g.split_heads(g.linear(h, w.wv, std::nullopt, p + "v"), config_.n_head_kv);
      const Tensor attn =
          g.linear(g.attention(q, k, v, layer, p), w.wo, std::nullopt, p + "attn_output");
      x = g.add(x, attn, p + "attn_residual");
      const Tensor ffn = g.swiglu_ffn(g.norm(x, w.ffn_norm, p + "ffn_norm"), w.ffn, p);
      x = g.add(x, ffn, p + "ffn_residual");
    }
    return g.logits(x, output_norm_, output_);
  }

 private:
  void load_weights(const WeightLoader& load) {
    const int64_t embd = config_.n_embd, n_ff = config_.n_ff;
    const int64_t q_dim = int64_t{config_.n_head} * config_.head_dim;
    const int64_t kv_dim = int64_t{config_.n_head_kv} * config_.head_dim;
    token_embd_ = load.get("token_embd.weight", {config_.n_vocab, embd});
    output_norm_ = load.get_f32("output_norm.weight", {embd});
    output_ = load.file().find_tensor("output.weight")
                  ? load.get("output.weight", {config_.n_vocab, embd})
                  : token_embd_;
    for (int32_t i = 0; i < config_.n_layer; ++i) {
      const std::string p = "blk." + std::to_string(i) + ".";
      Phi3Layer w;
      w.attn_norm = load.get_f32(p + "attn_norm.weight", {embd});
      // The fused matrices' row ranges are weights of their own: the same products as one
      // fused matmul split afterwards, with no copy.
      const std::string qkv = p + "attn_qkv.weight";
      const Shape qkv_shape = {q_dim + 2 * kv_dim, embd};
      w.wq = load.get_rows(qkv, qkv_shape, 0, q_dim);
      w.wk = load.get_rows(qkv, qkv_shape, q_dim, kv_dim);
      w.wv = load.get_rows(qkv, qkv_shape, q_dim + kv_dim, kv_dim);
      w.wo = load.get(p + "attn_output.weight", {embd, q_dim});
      w.ffn_norm = load.get_f32(p + "ffn_norm.weight", {embd});
      const std::string up = p + "ffn_up.weight";
      w.ffn.gate = load.get_rows(up, {2 * n_ff, embd}, 0, n_ff);
      w.ffn.up = load.get_rows(up, {2 * n_ff, embd}, n_ff, n_ff);
      w.ffn.down = load.get(p + "ffn_down.weight", {embd, n_ff});
      layers_.push_back(std::move(w));
    }
  }

  Backend& backend_;
  ModelConfig config_;
  Tensor token_embd_, output_norm_, output_;
  std::vector<Phi3Layer> layers_;
};

}  // namespace

std::unique_ptr<Model> load_phi3(const gguf::GgufFile& file, Backend& backend) {
  return std::make_unique<Phi3Model>(file, backend);
}

}  // namespace baton
