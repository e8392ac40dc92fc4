#pragma once

// The tensors of the Llama layer, under their GGUF and Hugging Face names: the rows most
// families' tables are made of, so that a family's header shows only what it changes.

#include "core/formats/family/model_family.h"

namespace baton::families {

inline constexpr LayerTensor kAttnNorm{.gguf = "attn_norm.weight",
                                       .hf = "input_layernorm.weight",
                                       .node = "attn_norm",
                                       .role = TensorRole::kNorm,
                                       .rows = FamilyDim::kEmbd};
inline constexpr LayerTensor kAttnQ{.gguf = "attn_q.weight",
                                    .hf = "self_attn.q_proj.weight",
                                    .node = "q",
                                    .role = TensorRole::kMatrix,
                                    .rows = FamilyDim::kQ,
                                    .rotary = true};
inline constexpr LayerTensor kAttnK{.gguf = "attn_k.weight",
                                    .hf = "self_attn.k_proj.weight",
                                    .node = "k",
                                    .role = TensorRole::kMatrix,
                                    .rows = FamilyDim::kKv,
                                    .rotary = true};
inline constexpr LayerTensor kAttnV{.gguf = "attn_v.weight",
                                    .hf = "self_attn.v_proj.weight",
                                    .node = "v",
                                    .role = TensorRole::kMatrix,
                                    .rows = FamilyDim::kKv};
inline constexpr LayerTensor kAttnQBias{.gguf = "attn_q.bias",
                                        .hf = "self_attn.q_proj.bias",
                                        .node = "q_bias",
                                        .role = TensorRole::kBias,
                                        .rows = FamilyDim::kQ};
inline constexpr LayerTensor kAttnKBias{.gguf = "attn_k.bias",
                                        .hf = "self_attn.k_proj.bias",
                                        .node = "k_bias",
                                        .role = TensorRole::kBias,
                                        .rows = FamilyDim::kKv};
inline constexpr LayerTensor kAttnVBias{.gguf = "attn_v.bias",
                                        .hf = "self_attn.v_proj.bias",
                                        .node = "v_bias",
                                        .role = TensorRole::kBias,
                                        .rows = FamilyDim::kKv};
inline constexpr LayerTensor kAttnOutput{.gguf = "attn_output.weight",
                                         .hf = "self_attn.o_proj.weight",
                                         .node = "attn_output",
                                         .role = TensorRole::kMatrix,
                                         .rows = FamilyDim::kEmbd,
                                         .cols = FamilyDim::kQ};
inline constexpr LayerTensor kFfnNorm{.gguf = "ffn_norm.weight",
                                      .hf = "post_attention_layernorm.weight",
                                      .node = "ffn_norm",
                                      .role = TensorRole::kNorm,
                                      .rows = FamilyDim::kEmbd};
inline constexpr LayerTensor kFfnGate{.gguf = "ffn_gate.weight",
                                      .hf = "mlp.gate_proj.weight",
                                      .node = "ffn_gate",
                                      .role = TensorRole::kMatrix,
                                      .rows = FamilyDim::kFf};
inline constexpr LayerTensor kFfnUp{.gguf = "ffn_up.weight",
                                    .hf = "mlp.up_proj.weight",
                                    .node = "ffn_up",
                                    .role = TensorRole::kMatrix,
                                    .rows = FamilyDim::kFf};
inline constexpr LayerTensor kFfnDown{.gguf = "ffn_down.weight",
                                      .hf = "mlp.down_proj.weight",
                                      .node = "ffn_down",
                                      .role = TensorRole::kMatrix,
                                      .rows = FamilyDim::kEmbd,
                                      .cols = FamilyDim::kFf};

// Norms of the attention's and the feed-forward's output before their residual add (Gemma's
// sandwich, OLMo 2).
inline constexpr LayerTensor kAttnPostNorm{.gguf = "post_attention_norm.weight",
                                           .hf = "post_attention_layernorm.weight",
                                           .node = "attn_post_norm",
                                           .role = TensorRole::kNorm,
                                           .rows = FamilyDim::kEmbd};
inline constexpr LayerTensor kFfnPostNorm{.gguf = "post_ffw_norm.weight",
                                          .hf = "post_feedforward_layernorm.weight",
                                          .node = "ffn_post_norm",
                                          .role = TensorRole::kNorm,
                                          .rows = FamilyDim::kEmbd};

// RMS norms of q and k before the rotation, over each head (Qwen3, Gemma 3); OLMo 2's span the
// whole projection (spanning()).
inline constexpr LayerTensor kAttnQNorm{.gguf = "attn_q_norm.weight",
                                        .hf = "self_attn.q_norm.weight",
                                        .node = "q_norm",
                                        .role = TensorRole::kNorm,
                                        .rows = FamilyDim::kHead};
inline constexpr LayerTensor kAttnKNorm{.gguf = "attn_k_norm.weight",
                                        .hf = "self_attn.k_norm.weight",
                                        .node = "k_norm",
                                        .role = TensorRole::kNorm,
                                        .rows = FamilyDim::kHead};

// A row of other dimensions.
constexpr LayerTensor spanning(LayerTensor tensor, FamilyDim rows) {
  tensor.rows = rows;
  return tensor;
}

// A row that the family's files may leave out.
constexpr LayerTensor optional(LayerTensor tensor) {
  tensor.optional = true;
  return tensor;
}

}  // namespace baton::families
