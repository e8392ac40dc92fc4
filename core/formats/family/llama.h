#pragma once

// Llama 1-3, Mistral, TinyLlama: the family the others vary.

#include "core/formats/family/model_family.h"
#include "core/formats/family/standard_tensors.h"

namespace baton::families {

inline constexpr HfModelClass kLlamaClasses[] = {
    {"LlamaForCausalLM"}, {.name = "MistralForCausalLM", .window_bounds_context = true}};

// Some Llama GGUF files carry q/k/v biases; most do not.
inline constexpr LayerTensor kLlamaLayer[] = {kAttnNorm,
                                              kAttnQ,
                                              kAttnK,
                                              kAttnV,
                                              optional(kAttnQBias),
                                              optional(kAttnKBias),
                                              optional(kAttnVBias),
                                              kAttnOutput,
                                              kFfnNorm,
                                              kFfnGate,
                                              kFfnUp,
                                              kFfnDown};

inline constexpr FamilyShape kLlamaShapes[] = {
    {"tinyllama-1.1b", 2048, 22, 32, 4, 0, 5632, 32000, 2048},
    {"llama-110m", 768, 12, 12, 12, 0, 2048, 32000, 1024},
    {"llama-3.2-1b", 2048, 16, 32, 8, 64, 8192, 128256, 131072, 500000.0f, 1e-5f, true},
};

inline constexpr ModelFamily kLlama{.gguf_arch = "llama",
                                    .summary = "the base the others vary",
                                    .hf_classes = kLlamaClasses,
                                    .layer = kLlamaLayer,
                                    .interleave_rotary = true,
                                    .rope_freqs = true,
                                    .shapes = kLlamaShapes};

}  // namespace baton::families
