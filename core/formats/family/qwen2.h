#pragma once

// Qwen2 and Qwen2.5: Llama with biases on q, k and v, rotary pairs as transformers keeps them.

#include "core/formats/family/model_family.h"
#include "core/formats/family/standard_tensors.h"

namespace baton::families {

inline constexpr HfModelClass kQwen2Classes[] = {{"Qwen2ForCausalLM"}};

inline constexpr LayerTensor kQwen2Layer[] = {kAttnNorm,  kAttnQ,     kAttnK,     kAttnV,
                                              kAttnQBias, kAttnKBias, kAttnVBias, kAttnOutput,
                                              kFfnNorm,   kFfnGate,   kFfnUp,     kFfnDown};

// Windowed layers (max_window_layers) have no GGUF key, in llama.cpp either.
inline constexpr HfRefusedFlag kQwen2RefusedFlags[] = {
    {"use_sliding_window", "Qwen2 with full attention"}};

inline constexpr FamilyShape kQwen2Shapes[] = {
    {"qwen2-0.5b", 896, 24, 14, 2, 0, 4864, 151936, 32768, 1000000.0f, 1e-6f, true},
};

inline constexpr ModelFamily kQwen2{.gguf_arch = "qwen2",
                                    .summary = "q/k/v biases",
                                    .hf_classes = kQwen2Classes,
                                    .layer = kQwen2Layer,
                                    .rope_freqs = true,
                                    .hf_refused_flags = kQwen2RefusedFlags,
                                    .tied_by_default = true,
                                    .shapes = kQwen2Shapes};

}  // namespace baton::families
