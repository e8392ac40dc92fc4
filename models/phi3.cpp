#include "models/phi3.h"

#include "baton/error.h"
#include "models/decoder_model.h"
#include "models/model_config.h"

namespace baton {
namespace {

// The fused matrices' row ranges are weights of their own: the same products as one fused
// matmul split afterwards, with no copy.
DecoderLayerWeights load_layer(const WeightLoader& load, const ModelConfig& c, int32_t i) {
  const std::string p = "blk." + std::to_string(i) + ".";
  const int64_t embd = c.n_embd, n_ff = c.n_ff;
  const int64_t q_dim = int64_t{c.n_head} * c.head_dim;
  const int64_t kv_dim = int64_t{c.n_head_kv} * c.head_dim;
  DecoderLayerWeights w;
  w.attn_norm = load.get_f32(p + "attn_norm.weight", {embd});
  const std::string qkv = p + "attn_qkv.weight";
  const Shape qkv_shape = {q_dim + 2 * kv_dim, embd};
  w.attn.wq = load.get_rows(qkv, qkv_shape, 0, q_dim);
  w.attn.wk = load.get_rows(qkv, qkv_shape, q_dim, kv_dim);
  w.attn.wv = load.get_rows(qkv, qkv_shape, q_dim + kv_dim, kv_dim);
  w.attn.wo = load.get(p + "attn_output.weight", {embd, q_dim});
  w.ffn_norm = load.get_f32(p + "ffn_norm.weight", {embd});
  const std::string up = p + "ffn_up.weight";
  w.ffn.gate = load.get_rows(up, {2 * n_ff, embd}, 0, n_ff);
  w.ffn.up = load.get_rows(up, {2 * n_ff, embd}, n_ff, n_ff);
  w.ffn.down = load.get(p + "ffn_down.weight", {embd, n_ff});
  return w;
}

}  // namespace

std::unique_ptr<Model> load_phi3(const gguf::GgufFile& file, Backend& backend) {
  for (const char* factors : {"rope_factors_long.weight", "rope_factors_short.weight"}) {
    if (file.find_tensor(factors)) {
      throw Error(ErrorCategory::kUnsupported,
                  file.path().filename().string() + ": phi3 LongRoPE (" + factors +
                      ", the 128k-context models) is not implemented yet");
    }
  }
  ModelConfig config = read_model_config(file);
  config.rope.mode = RopeMode::kNeox;
  const WeightLoader load(file, backend);
  config.n_vocab = static_cast<int32_t>(load.shape_2d("token_embd.weight")[0]);
  DecoderWeights weights{.embeddings = load.embeddings(config.n_vocab, config.n_embd)};
  for (int32_t i = 0; i < config.n_layer; ++i)
    weights.layers.push_back(load_layer(load, config, i));
  return make_decoder_model(backend, std::move(config), std::move(weights));
}

}  // namespace baton
