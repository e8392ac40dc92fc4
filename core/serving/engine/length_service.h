#pragma once

#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "baton/engine_stats.h"
#include "core/serving/engine/length_head.h"
#include "core/serving/engine/length_predictor.h"

namespace baton {

// What the engine predicts of one request's output length. What scheduling uses is the online
// predictor's until the length head replaces it after prefill; the online one is kept apart:
// it orders the waiting queue and sets reservation at admission, so it alone decides whether
// predictions are trusted.
struct PredictedLength {
  LengthFeatures features;
  double predicted_output = 0;
  double arrival_prediction = 0;
  bool head_predicted = false;
  bool cold = false;  // made before anything alike was learned (confidence 0)
};

// Length prediction for the engine: the online predictor, which learns every completion's
// length, the optional length head, and the scores of both against the lengths that came, from
// which sjf's trust in predictions follows (docs/scheduling.md).
class LengthPredictionService {
 public:
  explicit LengthPredictionService(std::shared_ptr<const LengthHead> head)
      : head_(std::move(head)) {}

  PredictedLength arrive(LengthFeatures features);
  // The length head's prediction from the logits after the prompt, for a request of the base
  // model without a client's hint; false when there is none.
  bool predict_after_prefill(PredictedLength& record, std::span<const float> logits, bool adapted);
  // A completion ended after `generated` tokens: the predictor learns it and the scores take
  // the prediction; whether predictions are to be trusted, when that is judged.
  std::optional<bool> learn(const PredictedLength& record, int32_t generated);
  // Whether anything was learned since the last call: cold predictions are then made again.
  bool take_learned() { return std::exchange(learned_, false); }
  // A cold prediction made again from what is known now; false for one that is not cold.
  bool refresh(PredictedLength& record) const;
  void fill(EngineStats& stats) const;

 private:
  // Predicted against actual lengths, with its error and tau kept current: tau costs
  // O(window²), so it is computed every kTrustEvery completions once the window is full.
  struct ScoredPredictions {
    PredictionLog log;
    double tau = 0, error = 0;
    void add(double predicted, int32_t generated);
  };

  std::shared_ptr<const LengthHead> head_;
  OnlineLengthPredictor predictor_;
  ScoredPredictions arrival_;  // the online predictor's (or the client's hint)
  ScoredPredictions head_scores_;
  bool learned_ = false;
};

}  // namespace baton
