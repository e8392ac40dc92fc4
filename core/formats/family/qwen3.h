#pragma once

// Qwen3 (dense): Llama with an RMS norm over each head of q and of k before the rotation, no
// biases, rotary pairs as transformers keeps them, a free head size.

#include "core/formats/family/model_family.h"
#include "core/formats/family/standard_tensors.h"

namespace baton::families {

inline constexpr HfModelClass kQwen3Classes[] = {{"Qwen3ForCausalLM"}};

inline constexpr LayerTensor kQwen3Layer[] = {kAttnNorm,  kAttnQ, kAttnQNorm,  kAttnK,
                                              kAttnKNorm, kAttnV, kAttnOutput, kFfnNorm,
                                              kFfnGate,   kFfnUp, kFfnDown};

// Windowed layers (max_window_layers) have no GGUF key, as in Qwen2.
inline constexpr HfRefusedFlag kQwen3RefusedFlags[] = {
    {"use_sliding_window", "Qwen3 with full attention"}};

inline constexpr FamilyShape kQwen3Shapes[] = {
    {"qwen3-0.6b", 1024, 28, 16, 8, 128, 3072, 151936, 40960, 1000000.0f, 1e-6f, true},
    {"qwen3-8b", 4096, 36, 32, 8, 128, 12288, 151936, 40960, 1000000.0f, 1e-6f, false},
};

inline constexpr ModelFamily kQwen3{.gguf_arch = "qwen3",
                                    .summary = "q/k norms per head",
                                    .hf_classes = kQwen3Classes,
                                    .layer = kQwen3Layer,
                                    .explicit_head_dim = true,
                                    .hf_refused_flags = kQwen3RefusedFlags,
                                    .tied_by_default = true,
                                    .shapes = kQwen3Shapes};

}  // namespace baton::families
