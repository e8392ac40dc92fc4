#include "models/llama.h"

#include <algorithm>

#include "baton/error.h"
#include "core/formats/family/model_family.h"
#include "models/decoder_model.h"
#include "models/model_config.h"

namespace baton {
namespace {

// Whether the family's layer lists q/k/v biases, which its files must then hold.
bool has_qkv_bias(const ModelFamily& family) {
  return std::ranges::any_of(family.layer,
                             [](const LayerTensor& t) { return t.role == TensorRole::kBias; });
}

// The standard layer plus q/k/v biases, where the file has them.
DecoderLayerWeights load_layer(const WeightLoader& load, const ModelConfig& c,
                               const ShardLayout& layout, int32_t i, bool biases_required) {
  const std::string p = "blk." + std::to_string(i) + ".";
  const int64_t q_dim = int64_t{c.n_head} * c.head_dim;
  const int64_t kv_dim = int64_t{c.n_head_kv} * c.head_dim;
  DecoderLayerWeights w = load_decoder_layer(load, c, layout, i);
  AttentionWeights& a = w.attn;
  a.bq = load.find_f32(p + "attn_q.bias", {q_dim}, layout.q_rows);
  a.bk = load.find_f32(p + "attn_k.bias", {kv_dim}, layout.kv_rows);
  a.bv = load.find_f32(p + "attn_v.bias", {kv_dim}, layout.kv_rows);
  if (biases_required && !(a.bq && a.bk && a.bv)) {
    throw Error(ErrorCategory::kInvalidModel, load.file().path().filename().string() + ": " +
                                                  c.architecture + " layer " + std::to_string(i) +
                                                  " lacks q/k/v biases");
  }
  return w;
}

}  // namespace

std::unique_ptr<Model> load_llama(const gguf::GgufFile& file, Backend& backend,
                                  const ModelShard& shard) {
  ModelConfig config = read_model_config(file);
  const ModelFamily& family = *find_model_family(config.architecture);
  // GGUF llama's q/k rows hold rotary pairs side by side; the others keep transformers' halves.
  config.rope.mode = family.interleave_rotary ? RopeMode::kNormal : RopeMode::kNeox;
  const WeightLoader load(file, backend);
  config.n_vocab = static_cast<int32_t>(load.shape_2d("token_embd.weight")[0]);
  // Llama 3's per-dimension rope frequency factors.
  if (auto factors = load.find_host_f32("rope_freqs.weight", config.rope.n_rot / 2))
    config.rope.freq_factors = std::move(*factors);
  const ShardLayout layout = shard_layout(config, shard);
  DecoderWeights weights{.embeddings =
                             load.embeddings(config.n_vocab, config.n_embd, layout.vocab_rows)};
  for (int32_t i = shard.first_layer; i < shard.layer_end(config.n_layer); ++i) {
    weights.layers.push_back(load_layer(load, config, layout, i, has_qkv_bias(family)));
  }
  return make_decoder_model(backend, layout.local, std::move(weights), shard);
}

}  // namespace baton
