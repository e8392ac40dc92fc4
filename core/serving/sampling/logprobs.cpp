#include "core/serving/sampling/logprobs.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace baton {

LogSoftmax::LogSoftmax(std::span<const float> logits) : logits_(logits) {
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  double total = 0;
  for (float l : logits) total += std::exp(static_cast<double>(l) - max_logit);
  log_total_ = max_logit + std::log(total);
}

float LogSoftmax::operator()(int32_t token) const {
  return static_cast<float>(logits_[token] - log_total_);
}

std::vector<TokenLogprob> LogSoftmax::top(int32_t count) const {
  std::vector<int32_t> ids(logits_.size());
  std::iota(ids.begin(), ids.end(), 0);
  const size_t keep = std::min(ids.size(), static_cast<size_t>(std::max(count, 0)));
  std::partial_sort(ids.begin(), ids.begin() + keep, ids.end(), [&](int32_t a, int32_t b) {
    return logits_[a] > logits_[b] || (logits_[a] == logits_[b] && a < b);
  });
  std::vector<TokenLogprob> out;
  out.reserve(keep);
  for (size_t i = 0; i < keep; ++i) out.push_back({ids[i], (*this)(ids[i])});
  return out;
}

}  // namespace baton
