#include "models/llama.h"

#include "baton/error.h"
#include "models/decoder_model.h"
#include "models/model_config.h"

namespace baton {
namespace {

// The standard layer plus Qwen2's q/k/v biases, which a variant with qkv_bias requires.
DecoderLayerWeights load_layer(const WeightLoader& load, const ModelConfig& c,
                               const ShardLayout& layout, int32_t i, const LlamaVariant& variant) {
  const std::string p = "blk." + std::to_string(i) + ".";
  const int64_t q_dim = int64_t{c.n_head} * c.head_dim;
  const int64_t kv_dim = int64_t{c.n_head_kv} * c.head_dim;
  DecoderLayerWeights w = load_decoder_layer(load, c, layout, i);
  AttentionWeights& a = w.attn;
  a.bq = load.find_f32(p + "attn_q.bias", {q_dim}, layout.q_rows);
  a.bk = load.find_f32(p + "attn_k.bias", {kv_dim}, layout.kv_rows);
  a.bv = load.find_f32(p + "attn_v.bias", {kv_dim}, layout.kv_rows);
  if (variant.qkv_bias && !(a.bq && a.bk && a.bv)) {
    throw Error(ErrorCategory::kInvalidModel, load.file().path().filename().string() + ": " +
                                                  c.architecture + " layer " + std::to_string(i) +
                                                  " lacks q/k/v biases");
  }
  return w;
}

}  // namespace

std::unique_ptr<Model> load_llama(const gguf::GgufFile& file, Backend& backend,
                                  const ModelShard& shard, const LlamaVariant& variant) {
  ModelConfig config = read_model_config(file);
  config.rope.mode = variant.rope_mode;
  const WeightLoader load(file, backend);
  config.n_vocab = static_cast<int32_t>(load.shape_2d("token_embd.weight")[0]);
  // Llama 3's per-dimension rope frequency factors.
  if (auto factors = load.find_host_f32("rope_freqs.weight", config.rope.n_rot / 2))
    config.rope.freq_factors = std::move(*factors);
  const ShardLayout layout = shard_layout(config, shard);
  DecoderWeights weights{.embeddings =
                             load.embeddings(config.n_vocab, config.n_embd, layout.vocab_rows)};
  for (int32_t i = shard.first_layer; i < shard.layer_end(config.n_layer); ++i) {
    weights.layers.push_back(load_layer(load, config, layout, i, variant));
  }
  return make_decoder_model(backend, layout.local, std::move(weights), shard);
}

}  // namespace baton
