#include "tools/length_head/length_head_eval.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "baton/error.h"
#include "core/engine/length_predictor.h"
#include "core/engine/step_runner.h"
#include "core/gguf/gguf_file.h"
#include "core/kv_cache/paged_kv_cache.h"
#include "models/lora/lora_readers.h"
#include "tools/length_head/ridge_regression.h"

namespace baton {
namespace {

LengthFeatures online_features(const LengthRecord& r, int32_t block_size) {
  return {.prefix_keys = prefix_keys(r.prompt_tokens, block_size),
          .max_tokens = r.max_tokens,
          .has_stop = r.has_stop,
          .expected_tokens = r.expected_tokens};
}

// The hidden state, then what the online predictor's request shape holds besides the prefix.
Eigen::VectorXd head_features(const LengthRecord& r, const std::vector<float>& hidden) {
  Eigen::VectorXd x(static_cast<Eigen::Index>(hidden.size()) + 2);
  for (size_t i = 0; i < hidden.size(); ++i) x(static_cast<Eigen::Index>(i)) = hidden[i];
  x(x.size() - 2) = std::log2(static_cast<double>(r.max_tokens));
  x(x.size() - 1) = r.has_stop ? 1.0 : 0.0;
  return x;
}

// Lengths are fitted on a log scale: they spread over orders of magnitude, and a head that is
// off by 10 tokens on a 20-token answer is worse than one off by 10 on a 300-token one.
double to_target(int32_t generated) {
  return std::log1p(static_cast<double>(generated));
}

// A client's hint is taken as it is, as the online predictor takes it.
double head_prediction(const LengthRecord& r, double target) {
  if (r.expected_tokens > 0) return std::min(r.expected_tokens, r.max_tokens);
  return std::clamp(std::expm1(target), 0.0, static_cast<double>(r.max_tokens));
}

PredictorScore score(const PredictionLog& log) {
  return {.mean_absolute_error = log.mean_absolute_error(), .kendall_tau = log.kendall_tau()};
}

}  // namespace

LengthHeadReport evaluate_length_head(std::span<const LengthRecord> log, const HiddenState& hidden,
                                      const LengthHeadOptions& options) {
  constexpr int kFolds = 5;
  const auto held_out = static_cast<size_t>(std::lround(options.holdout * log.size()));
  const size_t trained = log.size() - std::min(held_out, log.size());
  if (held_out < 2 || trained < 2 * kFolds) {
    throw Error(ErrorCategory::kInvalidArgument, "a log of " + std::to_string(log.size()) +
                                                     " requests is too short: the head needs " +
                                                     std::to_string(2 * kFolds) +
                                                     " to learn from and 2 held out");
  }
  LengthHeadReport report{.trained = trained, .held_out = held_out};

  OnlineLengthPredictor online;
  PredictionLog online_log(held_out);
  for (size_t i = 0; i < log.size(); ++i) {
    const LengthFeatures features = online_features(log[i], options.block_size);
    if (i >= trained) online_log.add(online.predict(features).tokens, log[i].generated);
    online.observe(features, log[i].generated);
  }
  report.online = score(online_log);

  std::vector<Eigen::VectorXd> features;
  features.reserve(log.size());
  for (const LengthRecord& r : log) features.push_back(head_features(r, hidden(r.prompt_tokens)));
  report.hidden_size = features.front().size() - 2;
  Eigen::MatrixXd x(static_cast<Eigen::Index>(trained), features.front().size());
  Eigen::VectorXd y(static_cast<Eigen::Index>(trained));
  for (size_t i = 0; i < trained; ++i) {
    x.row(static_cast<Eigen::Index>(i)) = features[i].transpose();
    y(static_cast<Eigen::Index>(i)) = to_target(log[i].generated);
  }
  constexpr std::array<double, 6> kPenalties = {1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0};
  const RidgeRegression head = RidgeRegression::fit(x, y, kPenalties, kFolds);
  report.penalty = head.penalty();
  const Eigen::VectorXd w = head.weights();
  const Eigen::Index d = w.size() - 2;
  report.fitted = {.hidden_weights = std::vector<double>(w.data(), w.data() + d),
                   .max_tokens_weight = w(d),
                   .stop_weight = w(d + 1),
                   .bias = head.bias()};
  PredictionLog head_log(held_out);
  for (size_t i = trained; i < log.size(); ++i) {
    head_log.add(head_prediction(log[i], head.predict(features[i])), log[i].generated);
  }
  report.head = score(head_log);
  return report;
}

LengthHead head_over_logits(const HiddenLengthHead& head, const Tensor& output) {
  const Tensor w32 = lora::to_f32(output);
  const auto d = static_cast<Eigen::Index>(head.hidden_weights.size());
  if (w32.rank() != 2 || w32.dim(1) != d) {
    throw Error(ErrorCategory::kInvalidArgument, "the output weights " + to_string(w32.shape()) +
                                                     " do not read a hidden state of " +
                                                     std::to_string(d));
  }
  const Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> wm(
      w32.data<float>(), w32.dim(0), d);
  Eigen::MatrixXd gram = (wm.transpose() * wm).cast<double>();
  // A vocabulary projection has full column rank; the nudge only keeps the solve defined should
  // some direction of the hidden state never reach the logits.
  gram.diagonal().array() += 1e-9 * gram.trace() / static_cast<double>(d);
  const Eigen::VectorXd z =
      gram.ldlt().solve(Eigen::Map<const Eigen::VectorXd>(head.hidden_weights.data(), d));
  const Eigen::VectorXf u = wm * z.cast<float>();
  return {.logit_weights = std::vector<float>(u.data(), u.data() + u.size()),
          .max_tokens_weight = head.max_tokens_weight,
          .stop_weight = head.stop_weight,
          .bias = head.bias};
}

Tensor output_projection(const gguf::GgufFile& file) {
  return file.tensor(file.find_tensor("output.weight") ? "output.weight" : "token_embd.weight");
}

HiddenState prompt_hidden_state(const Model& model, Backend& backend, int32_t context) {
  const ModelConfig& c = model.config();
  constexpr int32_t kBlockSize = 16;
  const int32_t n_blocks = (context + kBlockSize - 1) / kBlockSize;
  auto cache = std::make_shared<PagedKvCache>(KvCacheShape{.n_layers = c.n_layer,
                                                           .n_kv_heads = c.n_head_kv,
                                                           .head_dim = c.head_dim,
                                                           .block_size = kBlockSize,
                                                           .n_blocks = n_blocks},
                                              backend);
  return [&model, &backend, cache, n_blocks](std::span<const int32_t> prompt) {
    const auto length = static_cast<int32_t>(prompt.size());
    if (length == 0 || length > n_blocks * kBlockSize) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "a logged prompt of " + std::to_string(length) + " tokens does not fit the " +
                      std::to_string(n_blocks * kBlockSize) + "-token context");
    }
    auto layout = std::make_shared<PagedBatch>();
    layout->block_size = kBlockSize;
    layout->block_tables.emplace_back();
    for (int32_t b = 0; b < n_blocks; ++b) layout->block_tables[0].push_back(b);
    layout->token_seq.assign(prompt.size(), 0);
    for (int32_t pos = 0; pos < length; ++pos) layout->token_pos.push_back(pos);
    const StepInput input{.tokens = {prompt.begin(), prompt.end()},
                          .layout = std::move(layout),
                          .logit_rows = {length - 1},
                          .output_hidden = true,
                          .context_size = n_blocks * kBlockSize};
    return run_step(model, backend, *cache, input);
  };
}

}  // namespace baton
