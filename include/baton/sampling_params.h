#pragma once

#include <cstdint>

namespace baton {

// How the next token is chosen. Defaults follow llama.cpp's, so a user moving over sees the same
// behaviour.
struct SamplingParams {
  float temperature = 0.8f;  // <= 0: greedy (argmax), every other setting ignored
  int32_t top_k = 40;        // <= 0: off
  float top_p = 0.95f;       // >= 1: off
  float min_p = 0.05f;       // <= 0: off; drops tokens below min_p x the top token's probability
  float repetition_penalty = 1.0f;  // 1: off; divides positive logits (multiplies negative ones)
  int32_t repeat_last_n = 64;       // how many recent tokens the penalty looks at; -1: all
  // OpenAI-style penalties over the generated tokens only: a logit drops by presence_penalty if
  // the token appeared and by frequency_penalty times its count.
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  uint64_t seed = 0xba70'2024ull;  // same seed, same parameters, same logits: same tokens
};

}  // namespace baton
