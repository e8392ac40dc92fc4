#include "core/serving/engine/length_service.h"

#include <utility>

namespace baton {

void LengthPredictionService::ScoredPredictions::add(double predicted, int32_t generated) {
  log.add(predicted, generated);
  if (log.size() < kTrustWindow || log.total() % kTrustEvery == 0) {
    tau = log.kendall_tau();
    error = log.mean_absolute_error();
  }
}

PredictedLength LengthPredictionService::arrive(LengthFeatures features) {
  PredictedLength record{.features = std::move(features)};
  const LengthPrediction prediction = predictor_.predict(record.features);
  record.predicted_output = record.arrival_prediction = prediction.tokens;
  record.cold = prediction.confidence == 0;
  return record;
}

bool LengthPredictionService::predict_after_prefill(PredictedLength& record,
                                                    std::span<const float> logits, bool adapted) {
  // A head reads the base model's state; an adapter's logits are another model's.
  if (!head_ || record.features.expected_tokens > 0 || adapted) return false;
  record.predicted_output = head_->predict(logits, record.features);
  record.head_predicted = true;
  return true;
}

std::optional<bool> LengthPredictionService::learn(const PredictedLength& record,
                                                   int32_t generated) {
  predictor_.observe(record.features, generated);
  arrival_.add(record.arrival_prediction, generated);
  if (record.head_predicted) head_scores_.add(record.predicted_output, generated);
  learned_ = true;
  if (!arrival_.log.trust_due()) return std::nullopt;
  return arrival_.tau >= kMinTrustedTau;
}

bool LengthPredictionService::refresh(PredictedLength& record) const {
  if (!record.cold) return false;
  const LengthPrediction prediction = predictor_.predict(record.features);
  record.predicted_output = record.arrival_prediction = prediction.tokens;
  record.cold = prediction.confidence == 0;
  return true;
}

void LengthPredictionService::fill(EngineStats& s) const {
  s.length_predictions = static_cast<int64_t>(arrival_.log.total());
  s.length_prediction_error = arrival_.error;
  s.length_prediction_tau = arrival_.tau;
  s.length_head_predictions = static_cast<int64_t>(head_scores_.log.total());
  s.length_head_error = head_scores_.error;
  s.length_head_tau = head_scores_.tau;
}

}  // namespace baton
