#pragma once

#include <memory>

#include "models/model.h"

namespace baton {

// Architecture-specific choices within the Llama family.
struct LlamaVariant {
  RopeMode rope_mode = RopeMode::kNormal;  // GGUF llama q/k weights are permuted for "normal"
  bool qkv_bias = false;                   // Qwen2 adds biases to q, k and v
};

// Llama 1/2/3, Mistral, TinyLlama (GGUF architecture "llama") and Qwen2 ("qwen2"): pre-norm
// decoder blocks of RMSNorm, rotary attention with MHA/GQA/MQA, and a SwiGLU feed-forward.
// Loads `shard`'s layers and slices only.
std::unique_ptr<Model> load_llama(const gguf::GgufFile& file, Backend& backend,
                                  const ModelShard& shard, const LlamaVariant& variant);

}  // namespace baton
