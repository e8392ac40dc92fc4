#pragma once

// Phi-3: q, k and v fused into attn_qkv and gate and up into ffn_up, as both the checkpoint and
// llama.cpp keep them; LongRoPE for the 128k-context models.

#include "core/formats/family/model_family.h"
#include "core/formats/family/standard_tensors.h"

namespace baton::families {

inline constexpr HfModelClass kPhi3Classes[] = {
    {.name = "Phi3ForCausalLM", .window_bounds_context = true}};

// Transformers' Phi3Attention slices qkv_proj's output as [q | k | v] and Phi3MLP gate_up_proj's
// as [gate | up], as llama.cpp's phi3 does.
inline constexpr FusedPart kPhi3Qkv[] = {
    {"q", FamilyDim::kQ}, {"k", FamilyDim::kKv}, {"v", FamilyDim::kKv}};
inline constexpr FusedPart kPhi3GateUp[] = {{"ffn_gate", FamilyDim::kFf},
                                            {"ffn_up", FamilyDim::kFf}};

inline constexpr LayerTensor kPhi3QkvTensor{.gguf = "attn_qkv.weight",
                                            .hf = "self_attn.qkv_proj.weight",
                                            .role = TensorRole::kMatrix,
                                            .rows = FamilyDim::kQ,
                                            .fused = kPhi3Qkv};
inline constexpr LayerTensor kPhi3GateUpTensor{.gguf = "ffn_up.weight",
                                               .hf = "mlp.gate_up_proj.weight",
                                               .role = TensorRole::kMatrix,
                                               .rows = FamilyDim::kFf,
                                               .fused = kPhi3GateUp};

inline constexpr LayerTensor kPhi3Layer[] = {kAttnNorm, kPhi3QkvTensor,    kAttnOutput,
                                             kFfnNorm,  kPhi3GateUpTensor, kFfnDown};

inline constexpr FamilyShape kPhi3Shapes[] = {
    {"phi3-mini", 3072, 32, 32, 32, 0, 8192, 32064, 4096},
    {.name = "phi4-mini",
     .n_embd = 3072,
     .n_layer = 32,
     .n_head = 24,
     .n_head_kv = 8,
     .head_dim = 128,
     .n_ff = 8192,
     .n_vocab = 200064,
     .n_ctx = 131072,
     .tied_embeddings = true,
     .n_rot = 96},
};

inline constexpr ModelFamily kPhi3{.gguf_arch = "phi3",
                                   .summary = "fused attn_qkv and gate/up, LongRoPE",
                                   .hf_classes = kPhi3Classes,
                                   .layer = kPhi3Layer,
                                   .long_rope = true,
                                   .shapes = kPhi3Shapes};

}  // namespace baton::families
