#pragma once

// Predicting how many tokens a request will generate, from what is known when it arrives, so
// that the scheduler can run short requests first and reserve KV memory for what a request will
// use rather than for its max_tokens (S³, Jin et al. 2023; Qiu et al. 2024).

#include <algorithm>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace baton {

// What the scheduler knows of a request when it arrives.
struct LengthFeatures {
  // Hashes of the prompt's first 1, 2, 4, 8... KV blocks (prefix_keys below): a shared system
  // prompt or template shows as a shared key, however long it is.
  std::vector<uint64_t> prefix_keys;
  int32_t max_tokens = 0;
  bool has_stop = false;        // stop strings or stop token ids besides end-of-sequence
  int32_t expected_tokens = 0;  // the client's hint; 0: none
};

struct LengthPrediction {
  double tokens = 0;      // expected output tokens, at most max_tokens
  double confidence = 0;  // 0: a guess; towards 1: many alike requests, tightly spread
};

// The keys of LengthFeatures::prefix_keys: the hash of the first 1, 2, 4... blocks of
// `block_size` tokens that the prompt fills completely, up to 64 blocks.
std::vector<uint64_t> prefix_keys(std::span<const int32_t> prompt, int32_t block_size);

class LengthPredictor {
 public:
  virtual ~LengthPredictor() = default;
  virtual LengthPrediction predict(const LengthFeatures& request) const = 0;
  // A finished request's features and the tokens it generated.
  virtual void observe(const LengthFeatures& request, int32_t generated) = 0;
};

// Learned online from the server's own finished requests. Output lengths are kept per longest
// shared prefix and request shape (max_tokens to a power of two, stop settings), with coarser
// fallbacks: the same shape with any prefix, then every request. A prediction comes from the
// finest level that has seen a few requests; its confidence grows with their number and shrinks
// with their spread. A client hint (expected_tokens) is taken as it is.
class OnlineLengthPredictor final : public LengthPredictor {
 public:
  LengthPrediction predict(const LengthFeatures& request) const override;
  void observe(const LengthFeatures& request, int32_t generated) override;

 private:
  // Exponentially weighted, so that a prefix whose answers change is relearned.
  struct Stats {
    double weight = 0, mean = 0, square_mean = 0;
    uint64_t last_seen = 0;
  };
  void add(uint64_t key, double generated);
  void evict_oldest_half();

  std::unordered_map<uint64_t, Stats> stats_;
  uint64_t observations_ = 0;
};

// Ranking is all that sjf needs of a prediction: once a full window of finished requests ranks
// them poorly (Kendall's tau below the floor), the scheduler stops using predictions until the
// ranking recovers. Tau costs O(window²), so it is judged every kTrustEvery completions.
inline constexpr size_t kTrustWindow = 64;
inline constexpr uint64_t kTrustEvery = 16;
inline constexpr double kMinTrustedTau = 0.2;

// Predicted against actual lengths of the last finished requests: the error and the rank
// agreement (Kendall's tau) that /metrics shows and that decides whether the scheduler trusts
// the predictions.
class PredictionLog {
 public:
  explicit PredictionLog(size_t capacity = 512) : capacity_(std::max<size_t>(capacity, 1)) {}

  void add(double predicted, int32_t actual);
  size_t size() const { return pairs_.size(); }
  uint64_t total() const { return total_; }
  double mean_absolute_error() const;
  // Kendall's tau-b over the kept pairs; 0 with fewer than two.
  double kendall_tau() const;
  // Whether trust is judged after the completion just added (kTrustWindow, kTrustEvery).
  bool trust_due() const { return size() >= kTrustWindow && total() % kTrustEvery == 0; }

 private:
  size_t capacity_;
  std::vector<std::pair<double, int32_t>> pairs_;  // a ring once full
  size_t next_ = 0;
  uint64_t total_ = 0;
};

}  // namespace baton
