#pragma once

// Gemma 3 (text): Gemma 2's sandwich norms, GeGLU and scaled embeddings, with q/k norms per head
// instead of soft-capped scores, five windowed layers to one global, and the windowed layers
// rotating with a base of their own (10000) and without the global layers' scaling.

#include "core/formats/family/gemma2.h"
#include "core/formats/family/model_family.h"
#include "core/formats/family/standard_tensors.h"

namespace baton::families {

inline constexpr HfModelClass kGemma3Classes[] = {
    {"Gemma3ForCausalLM"}, {.name = "Gemma3ForConditionalGeneration", .multimodal = true}};

// transformers' Gemma3TextConfig.
inline constexpr HfDefault kGemma3HfDefaults[] = {{"vocab_size", 262208},
                                                  {"hidden_size", 2304},
                                                  {"intermediate_size", 9216},
                                                  {"num_hidden_layers", 26},
                                                  {"num_attention_heads", 8},
                                                  {"num_key_value_heads", 4},
                                                  {"head_dim", 256},
                                                  {"max_position_embeddings", 131072},
                                                  {"rms_norm_eps", 1e-6},
                                                  {"rope_theta", 1000000.0},
                                                  {"rope_local_base_freq", 10000.0},
                                                  {"query_pre_attn_scalar", 256},
                                                  {"sliding_window", 4096},
                                                  {"sliding_window_pattern", 6}};

inline constexpr LayerTensor kGemma3Layer[] = {
    kAttnNorm,   kAttnQ,        kAttnQNorm,        kAttnK,       kAttnKNorm, kAttnV,
    kAttnOutput, kAttnPostNorm, kGemma2PreFfnNorm, kFfnPostNorm, kFfnGate,   kFfnUp,
    kFfnDown};

// llama.cpp's rule, after Gemma's reference code: the 27B model (62 layers) scales queries by
// 1/sqrt(n_embd / n_head); the others by 1/sqrt(head_dim).
inline double gemma3_attention_scale(const FamilyHyper& h) {
  return 1.0 / std::sqrt(h.n_layer == 62 ? h.n_embd / h.n_head : h.head_dim);
}

inline constexpr FamilyShape kGemma3Shapes[] = {
    {"gemma3-1b", 1152, 26, 4, 1, 256, 6912, 262144, 32768, 1000000.0f, 1e-6f, true, 512},
    {"gemma3-4b", 2560, 34, 8, 4, 256, 10240, 262208, 131072, 1000000.0f, 1e-6f, true, 1024},
};

inline constexpr ModelFamily kGemma3{.gguf_arch = "gemma3",
                                     .summary = "q/k norms, 5 local layers to 1 global",
                                     .hf_classes = kGemma3Classes,
                                     .layer = kGemma3Layer,
                                     .norm_plus_one = true,
                                     .activation = FamilyActivation::kGelu,
                                     .scale_embeddings = true,
                                     .sliding_window_period = 6,
                                     .swa_rope_unscaled = true,
                                     .swa_rope_base = 10000.0f,
                                     .query_pre_attn_scalar = true,
                                     .default_attention_scale = gemma3_attention_scale,
                                     .explicit_head_dim = true,
                                     .hf_tied_by_default = true,
                                     .hf_defaults = kGemma3HfDefaults,
                                     .tied_by_default = true,
                                     .shapes = kGemma3Shapes};

}  // namespace baton::families
