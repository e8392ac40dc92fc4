#pragma once

#include "baton/llm.h"

namespace baton::testing {

// Greedy decoding of at most `max_tokens` tokens: the parameters reference outputs are made with.
inline GenerationParams greedy(int32_t max_tokens) {
  GenerationParams p;
  p.sampling.temperature = 0.0f;
  p.max_tokens = max_tokens;
  return p;
}

}  // namespace baton::testing
