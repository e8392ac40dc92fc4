#pragma once

#include <memory>

#include "models/model.h"

namespace baton {

// Phi-3 (GGUF architecture "phi3", as llama.cpp converts it): Llama's pre-norm blocks with NeoX
// rotary embeddings, q, k and v fused into one attn_qkv matrix and the SwiGLU's gate and up
// fused into one ffn_up (gate rows first). The 128k-context models' LongRoPE factors are used as
// llama.cpp uses them: the long set when the serving context exceeds the original one. Loads
// `shard`'s layers and slices only, each part of a fused matrix cut as its own weight would be.
std::unique_ptr<Model> load_phi3(const gguf::GgufFile& file, Backend& backend,
                                 const ModelShard& shard);

}  // namespace baton
