#pragma once

// The blocks every model family composes into one step's graph, in the manner of llama.cpp's
// graph context: embedding, RMSNorm, rotary embedding, attention over the paged KV cache, gated
// feed-forward, logits. Every weight matmul goes through linear(): the one place where
// tensor-parallel splits and LoRA adapters hook in.

#include <cstdint>
#include <optional>
#include <string>

#include "core/runtime/backend.h"
#include "core/runtime/graph.h"
#include "models/model.h"

namespace baton {

// The three matrices of a gated feed-forward: down · (act(gate · x) ⊙ up · x).
struct GatedFfnWeights {
  Tensor gate, up, down;
};

// The gate's activation: SiLU (SwiGLU: Llama, Qwen2, Phi-3) or GELU in its tanh form (GeGLU:
// Gemma).
enum class GateActivation { kSilu, kGelu };

// Self-attention's projections, with biases where the family has them (Qwen2), and RMS norms of
// q and k before the rotation: of a head's size, over each head (Qwen3, Gemma 3), else over the
// whole projection (OLMo 2).
struct AttentionWeights {
  Tensor wq, wk, wv, wo;
  std::optional<Tensor> bq, bk, bv;
  std::optional<Tensor> q_norm, k_norm;
};

// How linear() splits its weight over a tensor-parallel group (Megatron-LM): a column-parallel
// weight holds a slice of the output features, so each rank computes its slice of the result;
// a row-parallel one holds a slice of the input features, so the ranks' products are partial
// sums that an all-reduce adds up.
enum class Parallel { kReplicated, kColumn, kRow };

// One decoder layer: pre-norm self-attention and a pre-norm gated feed-forward, each added back;
// with post-norms (Gemma's sandwich, OLMo 2), each output is normed before it is added. OLMo 2 has
// no pre-norms.
struct DecoderLayerWeights {
  std::optional<Tensor> attn_norm;
  AttentionWeights attn;
  std::optional<Tensor> attn_post_norm;
  std::optional<Tensor> ffn_norm;
  GatedFfnWeights ffn;
  std::optional<Tensor> ffn_post_norm;
};

class StepGraph {
 public:
  // Checks the step's tokens against config.n_vocab (Error(kInvalidArgument) otherwise) and puts
  // its token ids and positions on `backend`. `config` is the shard's (its heads and n_ff).
  StepGraph(Graph& graph, Backend& backend, const ModelConfig& config, const StepInput& input,
            const KvTensors& kv, const ModelShard& shard = {});

  // The rows of `table` [n_vocab, n_embd] for the step's tokens.
  Tensor embed(const Tensor& table, const std::string& name);
  // x · weightᵀ, plus `bias` when given (a node of its own, "<name>_bias"). When the step
  // carries LoRA adapters that can adapt `name`, each token's update follows the product
  // ("<name>_lora"). A row-parallel weight's product is all-reduced over the shard's tensor group
  // ("<name>_all_reduce") before the bias is added.
  Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                const std::string& name, Parallel parallel = Parallel::kReplicated);
  Tensor norm(const Tensor& x, const Tensor& weight, const std::string& name);
  // [n, heads * head_dim] seen as [n, heads, head_dim].
  Tensor split_heads(const Tensor& x, int32_t heads) const;
  // Rotary embedding of [n, heads, head_dim] at the step's positions, as config.rope says (its
  // swa_rope for `layer` where that is windowed).
  Tensor rope(const Tensor& x, int32_t layer, const std::string& name);
  // Writes k and v ([n, n_head_kv, head_dim]) into `layer`'s cache (the shard's first layer is
  // the cache's first), then causal attention of q
  // ([n, n_head, head_dim]) over what its sequence has cached (the layer's window of it, with
  // the config's score scale and soft-cap): [n, n_head * head_dim]. Node names
  // "<prefix>kv_write" and "<prefix>attention".
  Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, int32_t layer,
                   const std::string& prefix);
  // down · (act(gate · x) ⊙ up · x), nodes "<prefix>ffn_gate", "ffn_up", "swiglu" or "geglu",
  // "ffn_down".
  Tensor gated_ffn(const Tensor& x, const GatedFfnWeights& w, GateActivation activation,
                   const std::string& prefix);
  Tensor add(const Tensor& a, const Tensor& b, const std::string& name);
  Tensor scale(const Tensor& x, float factor, const std::string& name);
  // Projections of h to rotary q and k (normed first where the weights say) and to v, attention
  // over `layer`'s cache, the output projection: nodes "<prefix>q", "k", "v" (and "_bias"),
  // "q_norm", "k_norm", "rope_q", "rope_k" (not on a layer without rotation), "kv_write",
  // "attention", "attn_output".
  Tensor self_attention(const Tensor& h, const AttentionWeights& w, int32_t layer,
                        const std::string& prefix);
  // x + self_attention(norm(x)), then that + gated_ffn(norm(that)), each output normed first
  // where the layer has post-norms, for layer "blk.<layer>." (nodes "attn_post_norm",
  // "attn_residual", "ffn_post_norm", "ffn_residual").
  Tensor decoder_layer(const Tensor& x, const DecoderLayerWeights& w, GateActivation activation,
                       int32_t layer);
  // Keeps only the rows that need logits, then the final norm and the vocabulary projection,
  // soft-capped when the config says so: [logit_rows, n_vocab] (a tensor-parallel shard: its
  // vocabulary slice).
  Tensor logits(const Tensor& x, const Tensor& norm_weight, const Tensor& output);

 private:
  Tensor host_i32(const std::vector<int32_t>& values) const;

  Graph& graph_;
  Backend& backend_;
  const ModelConfig& config_;
  const StepInput& input_;
  const KvTensors& kv_;
  ModelShard shard_;
  Tensor ids_, positions_;
  Tensor lora_slots_;  // each token's adapter slot; undefined when the step has no adapter
  RopeParams rope_;    // the config's, with LongRoPE's factors for this step's context
  float score_scale_;  // the attention's q·k multiplier
};

}  // namespace baton
