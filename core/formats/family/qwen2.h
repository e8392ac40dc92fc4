#pragma once

// Qwen2 and Qwen2.5: Llama with biases on q, k and v, rotary pairs as transformers keeps them.

#include "core/formats/family/model_family.h"
#include "core/formats/family/standard_tensors.h"

namespace baton::families {

inline constexpr std::string_view kQwen2Classes[] = {"Qwen2ForCausalLM"};

inline constexpr LayerTensor kQwen2QBias{"attn_q.bias", "self_attn.q_proj.bias", TensorRole::kBias,
                                         FamilyDim::kQ};
inline constexpr LayerTensor kQwen2KBias{"attn_k.bias", "self_attn.k_proj.bias", TensorRole::kBias,
                                         FamilyDim::kKv};
inline constexpr LayerTensor kQwen2VBias{"attn_v.bias", "self_attn.v_proj.bias", TensorRole::kBias,
                                         FamilyDim::kKv};

inline constexpr LayerTensor kQwen2Layer[] = {kAttnNorm,   kAttnQ,      kAttnK,      kAttnV,
                                              kQwen2QBias, kQwen2KBias, kQwen2VBias, kAttnOutput,
                                              kFfnNorm,    kFfnGate,    kFfnUp,      kFfnDown};

inline constexpr FamilyShape kQwen2Shapes[] = {
    {"qwen2-0.5b", 896, 24, 14, 2, 0, 4864, 151936, 32768, 1000000.0f, 1e-6f, true},
};

inline constexpr ModelFamily kQwen2{.gguf_arch = "qwen2",
                                    .summary = "q/k/v biases",
                                    .hf_classes = kQwen2Classes,
                                    .layer = kQwen2Layer,
                                    .tied_by_default = true,
                                    .shapes = kQwen2Shapes};

}  // namespace baton::families
