#include "models/llama.h"

#include <cmath>
#include <cstring>
#include <optional>

#include "baton/error.h"
#include "models/model_config.h"

namespace baton {
namespace {

struct LayerWeights {
  Tensor attn_norm, wq, wk, wv, wo;
  std::optional<Tensor> bq, bk, bv;
  Tensor ffn_norm, w_gate, w_up, w_down;
};

// Looks tensors up by their llama.cpp names and checks their shapes against the config, so a
// bad file fails at load with the tensor's name rather than later inside a kernel.
class WeightLoader {
 public:
  WeightLoader(const gguf::GgufFile& file, Backend& backend) : file_(file), backend_(backend) {}

  Tensor get(const std::string& name, const Shape& expected) const {
    const Tensor t = file_.tensor(name);
    if (t.shape() != expected) {
      throw Error(ErrorCategory::kInvalidModel, file_.path().filename().string() + ": tensor '" +
                                                    name + "' has shape " + to_string(t.shape()) +
                                                    ", expected " + to_string(expected));
    }
    return backend_.import_tensor(t);
  }
  Tensor get_f32(const std::string& name, const Shape& expected) const {
    const Tensor t = get(name, expected);
    if (t.dtype() != DType::kF32) {
      throw Error(ErrorCategory::kUnsupported,
                  file_.path().filename().string() + ": tensor '" + name + "' is " +
                      std::string(to_string(t.dtype())) + "; norms and biases must be f32");
    }
    return t;
  }
  std::optional<Tensor> find_f32(const std::string& name, const Shape& expected) const {
    if (!file_.find_tensor(name)) return std::nullopt;
    return get_f32(name, expected);
  }

 private:
  const gguf::GgufFile& file_;
  Backend& backend_;
};

class LlamaModel final : public Model {
 public:
  LlamaModel(const gguf::GgufFile& file, Backend& backend, const LlamaVariant& variant)
      : backend_(backend) {
    config_ = read_model_config(file);
    config_.rope.mode = variant.rope_mode;
    const gguf::TensorInfo* embd = file.find_tensor("token_embd.weight");
    if (!embd || embd->shape.size() != 2) {
      throw Error(ErrorCategory::kInvalidModel,
                  file.path().filename().string() + ": missing 2-D tensor 'token_embd.weight'");
    }
    config_.n_vocab = static_cast<int32_t>(embd->shape[0]);
    load_weights(file, variant);
  }

  const ModelConfig& config() const override { return config_; }

  Tensor build_step(Graph& graph, const StepInput& input, const PagedKvCache& cache) const override;

 private:
  void load_weights(const gguf::GgufFile& file, const LlamaVariant& variant);
  Tensor host_i32(const std::vector<int32_t>& values) const;
  Tensor attention_block(Graph& graph, const Tensor& x, const LayerWeights& w,
                         const Tensor& positions, const StepInput& input, const PagedKvCache& cache,
                         int32_t layer) const;

  Backend& backend_;
  ModelConfig config_;
  Tensor token_embd_, output_norm_, output_;
  std::vector<LayerWeights> layers_;
};

void LlamaModel::load_weights(const gguf::GgufFile& file, const LlamaVariant& variant) {
  const WeightLoader load(file, backend_);
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
    w.w_gate = load.get(p + "ffn_gate.weight", {config_.n_ff, embd});
    w.w_up = load.get(p + "ffn_up.weight", {config_.n_ff, embd});
    w.w_down = load.get(p + "ffn_down.weight", {embd, config_.n_ff});
    layers_.push_back(std::move(w));
  }
}

Tensor LlamaModel::host_i32(const std::vector<int32_t>& values) const {
  Tensor t = backend_.allocate_tensor(DType::kI32, {static_cast<int64_t>(values.size())});
  backend_.upload(t, values.data(), values.size() * sizeof(int32_t));
  return t;
}

Tensor LlamaModel::attention_block(Graph& graph, const Tensor& x, const LayerWeights& w,
                                   const Tensor& positions, const StepInput& input,
                                   const PagedKvCache& cache, int32_t layer) const {
  const int64_t n = x.dim(0);
  const std::string p = "blk." + std::to_string(layer) + ".";
  const Tensor h = graph.rms_norm(x, w.attn_norm, config_.rms_eps, p + "attn_norm");
  auto project = [&](const Tensor& weight, const std::optional<Tensor>& bias, int32_t heads,
                     const std::string& name) {
    Tensor out = graph.matmul(h, weight, p + name);
    if (bias) out = graph.add(out, *bias, p + name + "_bias");
    return out.reshape({n, heads, config_.head_dim});
  };
  Tensor q = project(w.wq, w.bq, config_.n_head, "q");
  Tensor k = project(w.wk, w.bk, config_.n_head_kv, "k");
  const Tensor v = project(w.wv, w.bv, config_.n_head_kv, "v");
  q = graph.rope(q, positions, config_.rope, p + "rope_q");
  k = graph.rope(k, positions, config_.rope, p + "rope_k");
  graph.kv_write(k, v, cache.keys(layer), cache.values(layer), input.layout, p + "kv_write");
  AttentionParams params;
  params.scale = 1.0f / std::sqrt(static_cast<float>(config_.head_dim));
  params.batch = input.layout;
  const Tensor attn =
      graph.attention(q, cache.keys(layer), cache.values(layer), params, p + "attention");
  const Tensor out = graph.matmul(attn.reshape({n, int64_t{config_.n_head} * config_.head_dim}),
                                  w.wo, p + "attn_output");
  return graph.add(x, out, p + "attn_residual");
}

Tensor LlamaModel::build_step(Graph& graph, const StepInput& input,
                              const PagedKvCache& cache) const {
  if (input.tokens.empty() || !input.layout ||
      input.layout->token_pos.size() != input.tokens.size()) {
    throw Error(ErrorCategory::kInvalidArgument, "a step needs tokens and a layout for each");
  }
  for (int32_t id : input.tokens) {
    if (id < 0 || id >= config_.n_vocab) {
      throw Error(ErrorCategory::kInvalidArgument, "token id " + std::to_string(id) +
                                                       " is outside the vocabulary of " +
                                                       std::to_string(config_.n_vocab));
    }
  }
  const Tensor ids = host_i32(input.tokens);
  const Tensor positions = host_i32(input.layout->token_pos);
  Tensor x = graph.embedding(token_embd_, ids, "token_embd");
  for (int32_t layer = 0; layer < config_.n_layer; ++layer) {
    const LayerWeights& w = layers_[layer];
    const std::string p = "blk." + std::to_string(layer) + ".";
    x = attention_block(graph, x, w, positions, input, cache, layer);
    const Tensor h = graph.rms_norm(x, w.ffn_norm, config_.rms_eps, p + "ffn_norm");
    const Tensor gate = graph.matmul(h, w.w_gate, p + "ffn_gate");
    const Tensor up = graph.matmul(h, w.w_up, p + "ffn_up");
    const Tensor down =
        graph.matmul(graph.swiglu(gate, up, p + "swiglu"), w.w_down, p + "ffn_down");
    x = graph.add(x, down, p + "ffn_residual");
  }
  // Only the rows that need logits go through the final norm and the vocabulary projection.
  x = graph.get_rows(x, host_i32(input.logit_rows), "logit_rows");
  x = graph.rms_norm(x, output_norm_, config_.rms_eps, "output_norm");
  return graph.matmul(x, output_, "output");
}

}  // namespace

std::unique_ptr<Model> load_llama(const gguf::GgufFile& file, Backend& backend,
                                  const LlamaVariant& variant) {
  return std::make_unique<LlamaModel>(file, backend, variant);
}

}  // namespace baton
