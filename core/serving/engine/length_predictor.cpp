#include "core/serving/engine/length_predictor.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/serving/engine/token_hash.h"

namespace baton {
namespace {

constexpr int32_t kMaxPrefixBlocks = 64;
// A level answers once it has seen this many requests (in decayed weight).
constexpr double kMinWeight = 3.0;
// Each observation's weight decays by this much per later one at its key: about the last 100
// requests of a prefix count.
constexpr double kDecay = 0.99;
constexpr size_t kMaxKeys = 8192;
constexpr uint64_t kShapeLevel = 0x9e3779b97f4a7c15ull, kGlobalLevel = 0xc2b2ae3d27d4eb4full;

// max_tokens to its power of two, and the stop settings: requests of one shape end alike more
// often than requests in general.
uint64_t shape_of(const LengthFeatures& request) {
  const auto limit = static_cast<uint32_t>(std::max(request.max_tokens, 1));
  return static_cast<uint64_t>(std::bit_width(limit)) << 1 | (request.has_stop ? 1u : 0u);
}

}  // namespace

std::vector<uint64_t> prefix_keys(std::span<const int32_t> prompt, int32_t block_size) {
  std::vector<uint64_t> keys;
  uint64_t h = 0;
  int32_t next_key_at = 1;
  for (int32_t block = 0; block < kMaxPrefixBlocks; ++block) {
    const size_t end = static_cast<size_t>(block + 1) * static_cast<size_t>(block_size);
    if (end > prompt.size()) break;
    for (size_t i = end - static_cast<size_t>(block_size); i < end; ++i) {
      h = hash_mix(h, static_cast<uint32_t>(prompt[i]));
    }
    if (block + 1 == next_key_at) {
      keys.push_back(h);
      next_key_at *= 2;
    }
  }
  return keys;
}

LengthPrediction OnlineLengthPredictor::predict(const LengthFeatures& request) const {
  const double limit = std::max(request.max_tokens, 1);
  if (request.expected_tokens > 0) {
    return {std::min<double>(request.expected_tokens, limit), 1.0};
  }
  const uint64_t shape = shape_of(request);
  std::vector<uint64_t> levels;
  for (auto it = request.prefix_keys.rbegin(); it != request.prefix_keys.rend(); ++it) {
    levels.push_back(hash_mix(*it, shape));
  }
  levels.push_back(hash_mix(kShapeLevel, shape));
  levels.push_back(kGlobalLevel);
  for (const uint64_t level : levels) {
    const auto found = stats_.find(level);
    if (found == stats_.end() || found->second.weight < kMinWeight) continue;
    const Stats& s = found->second;
    const double spread = std::sqrt(std::max(0.0, s.square_mean - s.mean * s.mean));
    const double confidence = s.weight / (s.weight + 4.0) / (1.0 + spread / std::max(s.mean, 1.0));
    return {std::clamp(s.mean, 1.0, limit), confidence};
  }
  // Nothing learned yet: the worst case, which is what scheduling without a prediction assumes.
  return {limit, 0.0};
}

void OnlineLengthPredictor::add(uint64_t key, double generated) {
  Stats& s = stats_[key];
  s.weight = s.weight * kDecay + 1.0;
  s.mean += (generated - s.mean) / s.weight;
  s.square_mean += (generated * generated - s.square_mean) / s.weight;
  s.last_seen = observations_;
}

void OnlineLengthPredictor::evict_oldest_half() {
  std::vector<uint64_t> seen;
  seen.reserve(stats_.size());
  for (const auto& [key, s] : stats_) seen.push_back(s.last_seen);
  std::nth_element(seen.begin(), seen.begin() + static_cast<ptrdiff_t>(seen.size() / 2),
                   seen.end());
  const uint64_t median = seen[seen.size() / 2];
  std::erase_if(stats_, [&](const auto& entry) { return entry.second.last_seen < median; });
}

void OnlineLengthPredictor::observe(const LengthFeatures& request, int32_t generated) {
  ++observations_;
  const uint64_t shape = shape_of(request);
  for (const uint64_t key : request.prefix_keys) add(hash_mix(key, shape), generated);
  add(hash_mix(kShapeLevel, shape), generated);
  add(kGlobalLevel, generated);
  if (stats_.size() > kMaxKeys) evict_oldest_half();
}

void PredictionLog::add(double predicted, int32_t actual) {
  ++total_;
  if (pairs_.size() < capacity_) {
    pairs_.emplace_back(predicted, actual);
    return;
  }
  pairs_[next_] = {predicted, actual};
  next_ = (next_ + 1) % capacity_;
}

double PredictionLog::mean_absolute_error() const {
  if (pairs_.empty()) return 0.0;
  double sum = 0;
  for (const auto& [predicted, actual] : pairs_) sum += std::abs(predicted - actual);
  return sum / static_cast<double>(pairs_.size());
}

double PredictionLog::kendall_tau() const {
  // tau-b: ties in either ranking count in neither concordant nor discordant pairs, and shrink
  // the denominator, so that a predictor that says one value for all scores 0, not 1.
  int64_t concordant = 0, discordant = 0, ties_predicted = 0, ties_actual = 0;
  for (size_t i = 0; i < pairs_.size(); ++i) {
    for (size_t j = i + 1; j < pairs_.size(); ++j) {
      const double dp = pairs_[i].first - pairs_[j].first;
      const int64_t da = int64_t{pairs_[i].second} - pairs_[j].second;
      if (dp == 0 && da == 0) continue;
      if (dp == 0) {
        ++ties_predicted;
      } else if (da == 0) {
        ++ties_actual;
      } else if ((dp > 0) == (da > 0)) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  }
  const double denominator =
      std::sqrt(static_cast<double>(concordant + discordant + ties_predicted) *
                static_cast<double>(concordant + discordant + ties_actual));
  return denominator > 0 ? static_cast<double>(concordant - discordant) / denominator : 0.0;
}

}  // namespace baton
