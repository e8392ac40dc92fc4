#include "models/decoder_model.h"

namespace baton {
namespace {

class DecoderModel final : public Model {
 public:
  DecoderModel(Backend& backend, ModelConfig config, DecoderWeights weights, ModelShard shard)
      : backend_(backend),
        config_(std::move(config)),
        weights_(std::move(weights)),
        shard_(shard) {}

  const ModelConfig& config() const override { return config_; }
  const ModelShard& shard() const override { return shard_; }

  Tensor build_step(Graph& graph, const StepInput& input, const KvTensors& kv) const override {
    StepGraph g(graph, backend_, config_, input, kv, shard_);
    const EmbeddingWeights& e = weights_.embeddings;
    Tensor x = input.hidden ? *input.hidden : g.embed(e.token_embd, "token_embd");
    for (int32_t layer = shard_.first_layer; layer < shard_.layer_end(config_.n_layer); ++layer) {
      x = g.decoder_layer(x, weights_.layers[static_cast<size_t>(layer - shard_.first_layer)],
                          layer);
    }
    return shard_.last_stage(config_.n_layer) ? g.logits(x, e.output_norm, e.output) : x;
  }

 private:
  Backend& backend_;
  ModelConfig config_;
  DecoderWeights weights_;
  ModelShard shard_;
};

}  // namespace

DecoderLayerWeights load_decoder_layer(const WeightLoader& load, const ModelConfig& c,
                                       const ShardLayout& layout, int32_t i) {
  const std::string p = "blk." + std::to_string(i) + ".";
  const int64_t embd = c.n_embd;
  const int64_t q_dim = int64_t{c.n_head} * c.head_dim;
  const int64_t kv_dim = int64_t{c.n_head_kv} * c.head_dim;
  DecoderLayerWeights w;
  w.attn_norm = load.get_f32(p + "attn_norm.weight", {embd});
  w.attn.wq = load.get(p + "attn_q.weight", {q_dim, embd}, layout.q_rows);
  w.attn.wk = load.get(p + "attn_k.weight", {kv_dim, embd}, layout.kv_rows);
  w.attn.wv = load.get(p + "attn_v.weight", {kv_dim, embd}, layout.kv_rows);
  w.attn.wo = load.get(p + "attn_output.weight", {embd, q_dim}, layout.attn_columns);
  w.ffn_norm = load.get_f32(p + "ffn_norm.weight", {embd});
  w.ffn.gate = load.get(p + "ffn_gate.weight", {c.n_ff, embd}, layout.ffn_rows);
  w.ffn.up = load.get(p + "ffn_up.weight", {c.n_ff, embd}, layout.ffn_rows);
  w.ffn.down = load.get(p + "ffn_down.weight", {embd, c.n_ff}, layout.ffn_columns);
  return w;
}

std::unique_ptr<Model> make_decoder_model(Backend& backend, ModelConfig config,
                                          DecoderWeights weights, const ModelShard& shard) {
  return std::make_unique<DecoderModel>(backend, std::move(config), std::move(weights), shard);
}

}  // namespace baton
