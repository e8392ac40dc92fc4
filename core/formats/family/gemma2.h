#pragma once

// Gemma 2: norms after attention and around the feed-forward, RMSNorm weights stored as w for a
// scale of 1 + w, GeGLU, scaled embeddings, soft-capped logits, a sliding window on alternate
// layers, a free head size.

#include <cmath>

#include "core/formats/family/model_family.h"
#include "core/formats/family/standard_tensors.h"

namespace baton::families {

inline constexpr HfModelClass kGemma2Classes[] = {{"Gemma2ForCausalLM"}};

inline constexpr LayerTensor kGemma2PreFfnNorm{.gguf = "ffn_norm.weight",
                                               .hf = "pre_feedforward_layernorm.weight",
                                               .node = "ffn_norm",
                                               .role = TensorRole::kNorm,
                                               .rows = FamilyDim::kEmbd};
inline constexpr LayerTensor kGemma2Layer[] = {
    kAttnNorm,         kAttnQ,       kAttnK,   kAttnV, kAttnOutput, kAttnPostNorm,
    kGemma2PreFfnNorm, kFfnPostNorm, kFfnGate, kFfnUp, kFfnDown};

// llama.cpp's rule, after Gemma's reference code: the 27B model (46 layers) scales queries by
// 1/sqrt(n_embd / n_head), its query_pre_attn_scalar; the others by 1/sqrt(head_dim).
inline double gemma2_attention_scale(const FamilyHyper& h) {
  return 1.0 / std::sqrt(h.n_layer == 46 ? h.n_embd / h.n_head : h.head_dim);
}

inline constexpr FamilyShape kGemma2Shapes[] = {
    {"gemma2-2b", 2304, 26, 8, 4, 256, 9216, 256000, 8192, 10000.0f, 1e-6f, true},
};

inline constexpr ModelFamily kGemma2{.gguf_arch = "gemma2",
                                     .summary = "post-norms, soft-capping, sliding window",
                                     .hf_classes = kGemma2Classes,
                                     .layer = kGemma2Layer,
                                     .norm_plus_one = true,
                                     .activation = FamilyActivation::kGelu,
                                     .scale_embeddings = true,
                                     .attn_softcap = 50.0f,
                                     .final_softcap = 30.0f,
                                     .sliding_window = 4096,
                                     .sliding_window_period = 2,
                                     .query_pre_attn_scalar = true,
                                     .default_attention_scale = gemma2_attention_scale,
                                     .explicit_head_dim = true,
                                     .hf_tied_by_default = true,
                                     .tied_by_default = true,
                                     .shapes = kGemma2Shapes};

}  // namespace baton::families
