#pragma once

// Gemma 2: norms after attention and around the feed-forward, RMSNorm weights stored as w for a
// scale of 1 + w, soft-capped logits, a sliding window on alternate layers, a free head size.

#include "core/formats/family/model_family.h"
#include "core/formats/family/standard_tensors.h"

namespace baton::families {

inline constexpr std::string_view kGemma2Classes[] = {"Gemma2ForCausalLM"};

inline constexpr LayerTensor kGemma2PostAttentionNorm{"post_attention_norm.weight",
                                                      "post_attention_layernorm.weight",
                                                      TensorRole::kNorm, FamilyDim::kEmbd};
inline constexpr LayerTensor kGemma2PreFfnNorm{
    "ffn_norm.weight", "pre_feedforward_layernorm.weight", TensorRole::kNorm, FamilyDim::kEmbd};
inline constexpr LayerTensor kGemma2PostFfnNorm{"post_ffw_norm.weight",
                                                "post_feedforward_layernorm.weight",
                                                TensorRole::kNorm, FamilyDim::kEmbd};

inline constexpr LayerTensor kGemma2Layer[] = {kAttnNorm,
                                               kAttnQ,
                                               kAttnK,
                                               kAttnV,
                                               kAttnOutput,
                                               kGemma2PostAttentionNorm,
                                               kGemma2PreFfnNorm,
                                               kGemma2PostFfnNorm,
                                               kFfnGate,
                                               kFfnUp,
                                               kFfnDown};

// Gemma 2's published soft caps.
inline constexpr FamilyFloatKey kGemma2Keys[] = {{"attn_logit_softcapping", 50.0f},
                                                 {"final_logit_softcapping", 30.0f}};

inline constexpr FamilyShape kGemma2Shapes[] = {
    {"gemma2-2b", 2304, 26, 8, 4, 256, 9216, 256000, 8192, 10000.0f, 1e-6f, true},
};

inline constexpr ModelFamily kGemma2{.gguf_arch = "gemma2",
                                     .summary = "post-norms, soft-capping, sliding window",
                                     .hf_classes = kGemma2Classes,
                                     .layer = kGemma2Layer,
                                     .norm_plus_one = true,
                                     .sliding_window = true,
                                     .explicit_head_dim = true,
                                     .synth_keys = kGemma2Keys,
                                     .tied_by_default = true,
                                     .shapes = kGemma2Shapes};

}  // namespace baton::families
