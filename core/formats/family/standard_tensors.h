#pragma once

// The tensors of the Llama layer, under their GGUF and Hugging Face names: the rows most
// families' tables are made of, so that a family's header shows only what it changes.

#include "core/formats/family/model_family.h"

namespace baton::families {

inline constexpr LayerTensor kAttnNorm{"attn_norm.weight", "input_layernorm.weight",
                                       TensorRole::kNorm, FamilyDim::kEmbd};
inline constexpr LayerTensor kAttnQ{"attn_q.weight",
                                    "self_attn.q_proj.weight",
                                    TensorRole::kMatrix,
                                    FamilyDim::kQ,
                                    FamilyDim::kEmbd,
                                    {},
                                    true};
inline constexpr LayerTensor kAttnK{"attn_k.weight",
                                    "self_attn.k_proj.weight",
                                    TensorRole::kMatrix,
                                    FamilyDim::kKv,
                                    FamilyDim::kEmbd,
                                    {},
                                    true};
inline constexpr LayerTensor kAttnV{"attn_v.weight", "self_attn.v_proj.weight", TensorRole::kMatrix,
                                    FamilyDim::kKv};
inline constexpr LayerTensor kAttnOutput{"attn_output.weight", "self_attn.o_proj.weight",
                                         TensorRole::kMatrix, FamilyDim::kEmbd, FamilyDim::kQ};
inline constexpr LayerTensor kFfnNorm{"ffn_norm.weight", "post_attention_layernorm.weight",
                                      TensorRole::kNorm, FamilyDim::kEmbd};
inline constexpr LayerTensor kFfnGate{"ffn_gate.weight", "mlp.gate_proj.weight",
                                      TensorRole::kMatrix, FamilyDim::kFf};
inline constexpr LayerTensor kFfnUp{"ffn_up.weight", "mlp.up_proj.weight", TensorRole::kMatrix,
                                    FamilyDim::kFf};
inline constexpr LayerTensor kFfnDown{"ffn_down.weight", "mlp.down_proj.weight",
                                      TensorRole::kMatrix, FamilyDim::kEmbd, FamilyDim::kFf};

}  // namespace baton::families
