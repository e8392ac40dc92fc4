#pragma once

#include <memory>

#include "models/model.h"

namespace baton {

// Gemma 2 (GGUF architecture "gemma2", as llama.cpp converts it): embeddings scaled by
// sqrt(n_embd); each layer norms before and after both attention and its GeGLU feed-forward;
// attention scores and the final logits are soft-capped; the layers the sliding-window pattern
// names (every other one, from the first) attend only to the last `sliding_window` positions.
// Loads `shard`'s layers and slices only.
std::unique_ptr<Model> load_gemma2(const gguf::GgufFile& file, Backend& backend,
                                   const ModelShard& shard);

}  // namespace baton
