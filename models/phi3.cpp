#include "models/phi3.h"

#include "baton/error.h"
#include "models/decoder_model.h"
#include "models/model_config.h"

namespace baton {
namespace {

// The fused matrices' row ranges are weights of their own: the same products as one fused
// matmul split afterwards, with no copy.
// A tensor-parallel shard takes its rows of each part and its columns of the output matrices.
DecoderLayerWeights load_layer(const WeightLoader& load, const ModelConfig& c,
                               const ShardLayout& layout, int32_t i) {
  const std::string p = "blk." + std::to_string(i) + ".";
  const int64_t embd = c.n_embd, n_ff = c.n_ff;
  const int64_t q_dim = int64_t{c.n_head} * c.head_dim;
  const int64_t kv_dim = int64_t{c.n_head_kv} * c.head_dim;
  DecoderLayerWeights w;
  w.attn_norm = load.get_f32(p + "attn_norm.weight", {embd});
  const std::string qkv = p + "attn_qkv.weight";
  const Shape qkv_shape = {q_dim + 2 * kv_dim, embd};
  w.attn.wq = load.get_rows(qkv, qkv_shape, 0, q_dim, layout.q_rows);
  w.attn.wk = load.get_rows(qkv, qkv_shape, q_dim, kv_dim, layout.kv_rows);
  w.attn.wv = load.get_rows(qkv, qkv_shape, q_dim + kv_dim, kv_dim, layout.kv_rows);
  w.attn.wo = load.get(p + "attn_output.weight", {embd, q_dim}, layout.attn_columns);
  w.ffn_norm = load.get_f32(p + "ffn_norm.weight", {embd});
  const std::string up = p + "ffn_up.weight";
  w.ffn.gate = load.get_rows(up, {2 * n_ff, embd}, 0, n_ff, layout.ffn_rows);
  w.ffn.up = load.get_rows(up, {2 * n_ff, embd}, n_ff, n_ff, layout.ffn_rows);
  w.ffn.down = load.get(p + "ffn_down.weight", {embd, n_ff}, layout.ffn_columns);
  return w;
}

// LongRoPE (the 128k-context models): both factor sets, the context length they switch at
// (rope.scaling.original_context_length, else the trained one) and the magnitude scaling.
std::optional<ModelConfig::LongRope> read_long_rope(const WeightLoader& load,
                                                    const ModelConfig& c) {
  const gguf::GgufFile& file = load.file();
  const std::string name = file.path().filename().string();
  auto long_factors = load.find_host_f32("rope_factors_long.weight", c.rope.n_rot / 2);
  auto short_factors = load.find_host_f32("rope_factors_short.weight", c.rope.n_rot / 2);
  if (!long_factors && !short_factors) return std::nullopt;
  if (!long_factors || !short_factors) {
    throw Error(ErrorCategory::kInvalidModel,
                name + ": LongRoPE needs both rope_factors_long and rope_factors_short");
  }
  if (c.rope.n_rot != c.head_dim) {
    throw Error(ErrorCategory::kUnsupported, name + ": LongRoPE with a partial rotation (n_rot " +
                                                 std::to_string(c.rope.n_rot) + " of head size " +
                                                 std::to_string(c.head_dim) + ") is not supported");
  }
  const std::string a = c.architecture;
  ModelConfig::LongRope r{
      .short_factors = std::move(*short_factors),
      .long_factors = std::move(*long_factors),
      .original_context = static_cast<int32_t>(
          file.find_int(a + ".rope.scaling.original_context_length").value_or(c.n_ctx_train)),
      .attn_factor =
          static_cast<float>(file.find_float(a + ".rope.scaling.attn_factor").value_or(1.0))};
  if (r.original_context <= 0 || !(r.attn_factor > 0.0f)) {
    throw Error(ErrorCategory::kInvalidModel,
                name + ": rope.scaling.original_context_length and attn_factor must be positive");
  }
  return r;
}

}  // namespace

std::unique_ptr<Model> load_phi3(const gguf::GgufFile& file, Backend& backend,
                                 const ModelShard& shard) {
  ModelConfig config = read_model_config(file);
  config.rope.mode = RopeMode::kNeox;
  const WeightLoader load(file, backend);
  config.long_rope = read_long_rope(load, config);
  config.n_vocab = static_cast<int32_t>(load.shape_2d("token_embd.weight")[0]);
  const ShardLayout layout = shard_layout(config, shard);
  DecoderWeights weights{.embeddings =
                             load.embeddings(config.n_vocab, config.n_embd, layout.vocab_rows)};
  for (int32_t i = shard.first_layer; i < shard.layer_end(config.n_layer); ++i) {
    weights.layers.push_back(load_layer(load, config, layout, i));
  }
  return make_decoder_model(backend, layout.local, std::move(weights), shard);
}

}  // namespace baton
