#pragma once

#include <memory>

#include "models/model.h"

namespace baton {

// Llama 1/2/3, Mistral, TinyLlama (GGUF architecture "llama") and Qwen2 ("qwen2"): pre-norm
// decoder blocks of RMSNorm, rotary attention with MHA/GQA/MQA, and a SwiGLU feed-forward. The
// file's family (core/formats/family) says how rotary pairs are laid out and whether q, k and v
// have biases. Loads `shard`'s layers and slices only.
std::unique_ptr<Model> load_llama(const gguf::GgufFile& file, Backend& backend,
                                  const ModelShard& shard);

}  // namespace baton
