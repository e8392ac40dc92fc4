#pragma once

#include <memory>

#include "models/model.h"

namespace baton {

// Phi-3 (GGUF architecture "phi3", as llama.cpp converts it): Llama's pre-norm blocks with NeoX
// rotary embeddings, q, k and v fused into one attn_qkv matrix and the SwiGLU's gate and up
// fused into one ffn_up (gate rows first). Files with LongRoPE factors (the 128k-context models)
// are refused for now, naming the tensor.
std::unique_ptr<Model> load_phi3(const gguf::GgufFile& file, Backend& backend);

}  // namespace baton
