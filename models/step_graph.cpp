#include "models/step_graph.h"

#include <cmath>

#include "baton/error.h"
#include "models/lora/lora_slots.h"

namespace baton {

StepGraph::StepGraph(Graph& graph, Backend& backend, const ModelConfig& config,
                     const StepInput& input, const KvTensors& kv, const ModelShard& shard)
    : graph_(graph), backend_(backend), config_(config), input_(input), kv_(kv), shard_(shard) {
  if (input.tokens.empty() || !input.layout ||
      input.layout->token_pos.size() != input.tokens.size()) {
    throw Error(ErrorCategory::kInvalidArgument, "a step needs tokens and a layout for each");
  }
  for (int32_t id : input.tokens) {
    if (id < 0 || id >= config.n_vocab) {
      throw Error(ErrorCategory::kInvalidArgument, "token id " + std::to_string(id) +
                                                       " is outside the vocabulary of " +
                                                       std::to_string(config.n_vocab));
    }
  }
  ids_ = host_i32(input.tokens);
  positions_ = host_i32(input.layout->token_pos);
  if (input.lora && input.lora->slots) {
    if (input.lora->token_slots.size() != input.tokens.size()) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "a step with LoRA adapters needs a slot for each token");
    }
    lora_slots_ = host_i32(input.lora->token_slots);
  }
  rope_ = config.rope;
  score_scale_ = config.attn_scale > 0.0f ? config.attn_scale
                                          : 1.0f / std::sqrt(static_cast<float>(config.head_dim));
  if (const auto& long_rope = config.long_rope) {
    rope_.freq_factors = input.context_size > long_rope->original_context
                             ? long_rope->long_factors
                             : long_rope->short_factors;
  }
}

Tensor StepGraph::host_i32(const std::vector<int32_t>& values) const {
  Tensor t = backend_.allocate_tensor(DType::kI32, {static_cast<int64_t>(values.size())});
  backend_.upload(t, values.data(), values.size() * sizeof(int32_t));
  return t;
}

Tensor StepGraph::embed(const Tensor& table, const std::string& name) {
  return graph_.embedding(table, ids_, name);
}

Tensor StepGraph::linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                         const std::string& name, Parallel parallel) {
  Tensor out = graph_.matmul(x, weight, name);
  if (lora_slots_.defined()) {
    if (const LoraSlots::Stack* stack = input_.lora->slots->find(name)) {
      out = graph_.lora(out, x, stack->a, stack->bt, lora_slots_, name + "_lora");
    }
  }
  if (parallel == Parallel::kRow && shard_.tp_size > 1) {
    out = graph_.all_reduce(out, *shard_.tensor_group, name + "_all_reduce");
  }
  return bias ? graph_.add(out, *bias, name + "_bias") : out;
}

Tensor StepGraph::norm(const Tensor& x, const Tensor& weight, const std::string& name) {
  return graph_.rms_norm(x, weight, config_.rms_eps, name);
}

Tensor StepGraph::split_heads(const Tensor& x, int32_t heads) const {
  return x.reshape({x.dim(0), heads, config_.head_dim});
}

Tensor StepGraph::rope(const Tensor& x, int32_t layer, const std::string& name) {
  const bool local = config_.swa_rope && config_.windowed(layer);
  return graph_.rope(x, positions_, local ? *config_.swa_rope : rope_, name);
}

Tensor StepGraph::attention(const Tensor& q, const Tensor& k, const Tensor& v, int32_t layer,
                            const std::string& prefix) {
  const size_t cached = static_cast<size_t>(layer - shard_.first_layer);
  graph_.kv_write(k, v, kv_.keys[cached], kv_.values[cached], input_.layout, prefix + "kv_write");
  AttentionParams params;
  params.scale = score_scale_;
  params.softcap = config_.attn_softcap;
  params.window = config_.attention_window(layer);
  params.batch = input_.layout;
  const Tensor out =
      graph_.attention(q, kv_.keys[cached], kv_.values[cached], params, prefix + "attention");
  return out.reshape({q.dim(0), int64_t{config_.n_head} * config_.head_dim});
}

Tensor StepGraph::gated_ffn(const Tensor& x, const GatedFfnWeights& w, GateActivation activation,
                            const std::string& prefix) {
  const Tensor gate = linear(x, w.gate, std::nullopt, prefix + "ffn_gate", Parallel::kColumn);
  const Tensor up = linear(x, w.up, std::nullopt, prefix + "ffn_up", Parallel::kColumn);
  const Tensor gated = activation == GateActivation::kSilu
                           ? graph_.swiglu(gate, up, prefix + "swiglu")
                           : graph_.geglu(gate, up, prefix + "geglu");
  return linear(gated, w.down, std::nullopt, prefix + "ffn_down", Parallel::kRow);
}

Tensor StepGraph::add(const Tensor& a, const Tensor& b, const std::string& name) {
  return graph_.add(a, b, name);
}

Tensor StepGraph::scale(const Tensor& x, float factor, const std::string& name) {
  return graph_.scale(x, factor, name);
}

Tensor StepGraph::self_attention(const Tensor& h, const AttentionWeights& w, int32_t layer,
                                 const std::string& prefix) {
  // A q or k norm is over the whole projection (OLMo 2) or, a head's size, over each head
  // (Qwen3, Gemma 3).
  const auto project = [&](const Tensor& weight, const std::optional<Tensor>& bias,
                           const std::string& name, int32_t heads,
                           const std::optional<Tensor>& norm_weight) {
    Tensor x = linear(h, weight, bias, prefix + name, Parallel::kColumn);
    if (norm_weight && norm_weight->dim(0) != config_.head_dim) {
      x = norm(x, *norm_weight, prefix + name + "_norm");
    }
    x = split_heads(x, heads);
    if (norm_weight && norm_weight->dim(0) == config_.head_dim) {
      x = norm(x, *norm_weight, prefix + name + "_norm");
    }
    return x;
  };
  Tensor q = project(w.wq, w.bq, "q", config_.n_head, w.q_norm);
  Tensor k = project(w.wk, w.bk, "k", config_.n_head_kv, w.k_norm);
  if (config_.rotary(layer)) {
    q = rope(q, layer, prefix + "rope_q");
    k = rope(k, layer, prefix + "rope_k");
  }
  const Tensor v = project(w.wv, w.bv, "v", config_.n_head_kv, {});
  return linear(attention(q, k, v, layer, prefix), w.wo, std::nullopt, prefix + "attn_output",
                Parallel::kRow);
}

Tensor StepGraph::decoder_layer(const Tensor& x, const DecoderLayerWeights& w,
                                GateActivation activation, int32_t layer) {
  const std::string p = "blk." + std::to_string(layer) + ".";
  const Tensor attn_in = w.attn_norm ? norm(x, *w.attn_norm, p + "attn_norm") : x;
  Tensor attn = self_attention(attn_in, w.attn, layer, p);
  if (w.attn_post_norm) attn = norm(attn, *w.attn_post_norm, p + "attn_post_norm");
  const Tensor mid = add(x, attn, p + "attn_residual");
  const Tensor ffn_in = w.ffn_norm ? norm(mid, *w.ffn_norm, p + "ffn_norm") : mid;
  Tensor ffn = gated_ffn(ffn_in, w.ffn, activation, p);
  if (w.ffn_post_norm) ffn = norm(ffn, *w.ffn_post_norm, p + "ffn_post_norm");
  return add(mid, ffn, p + "ffn_residual");
}

Tensor StepGraph::logits(const Tensor& x, const Tensor& norm_weight, const Tensor& output) {
  const Tensor rows = graph_.get_rows(x, host_i32(input_.logit_rows), "logit_rows");
  const Tensor normed = norm(rows, norm_weight, "output_norm");
  if (input_.output_hidden) return normed;
  const Tensor logits = linear(normed, output, std::nullopt, "output", Parallel::kColumn);
  if (config_.final_softcap <= 0.0f) return logits;
  return graph_.softcap(logits, config_.final_softcap, "output_softcap");
}

}  // namespace baton
