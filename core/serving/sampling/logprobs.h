#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "baton/generation.h"

namespace baton {

// Log-probabilities under the model's own distribution: the log-softmax of the raw logits,
// before any penalty, temperature or cut-off (what vLLM reports by default), so that scores
// compare across requests with different sampling settings.
class LogSoftmax {
 public:
  explicit LogSoftmax(std::span<const float> logits);

  float operator()(int32_t token) const;
  // The `count` most likely tokens, most likely first (lower id first on ties).
  std::vector<TokenLogprob> top(int32_t count) const;

 private:
  std::span<const float> logits_;
  double log_total_;  // log of sum(exp(logit)), the normaliser
};

}  // namespace baton
