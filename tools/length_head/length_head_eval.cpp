#include "tools/length_head/length_head_eval.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "baton/error.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/serving/engine/length_predictor.h"
#include "core/serving/engine/step_runner.h"
#include "core/serving/kv_cache/paged_kv_cache.h"
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

// The fit in the features' own units, the form that is written and served.
HiddenLengthHead linear_form(const RidgeRegression& fit) {
  const Eigen::VectorXd w = fit.weights();
  const Eigen::Index d = w.size() - 2;
  return {.hidden_weights = std::vector<double>(w.data(), w.data() + d),
          .max_tokens_weight = w(d),
          .stop_weight = w(d + 1),
          .bias = fit.bias()};
}

PredictorScore score(const PredictionLog& log) {
  return {.mean_absolute_error = log.mean_absolute_error(), .kendall_tau = log.kendall_tau()};
}

}  // namespace

double HiddenLengthHead::predict(std::span<const float> hidden, const LengthRecord& r) const {
  // A client's hint is taken as it is, as the online predictor and the server take it.
  if (r.expected_tokens > 0) return std::min(r.expected_tokens, r.max_tokens);
  double sum = bias + max_tokens_weight * std::log2(static_cast<double>(r.max_tokens)) +
               (r.has_stop ? stop_weight : 0.0);
  for (size_t i = 0; i < hidden.size(); ++i) sum += hidden_weights[i] * hidden[i];
  return LengthHead::tokens_of(sum, r.max_tokens);
}

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

  std::vector<std::vector<float>> states;
  states.reserve(log.size());
  for (size_t i = 0; i < log.size(); ++i) {
    try {
      states.push_back(hidden(log[i].prompt_tokens));
    } catch (const Error& e) {
      throw Error(e.category(), "logged request " + std::to_string(i + 1) + ": " + e.what());
    }
  }
  report.hidden_size = static_cast<int64_t>(states.front().size());
  Eigen::MatrixXd x(static_cast<Eigen::Index>(log.size()), report.hidden_size + 2);
  Eigen::VectorXd y(x.rows());
  for (size_t i = 0; i < log.size(); ++i) {
    x.row(static_cast<Eigen::Index>(i)) = head_features(log[i], states[i]).transpose();
    y(static_cast<Eigen::Index>(i)) = to_target(log[i].generated);
  }
  const auto n_trained = static_cast<Eigen::Index>(trained);
  constexpr std::array<double, 6> kPenalties = {1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0};
  const RidgeRegression fit =
      RidgeRegression::fit(x.topRows(n_trained), y.head(n_trained), kPenalties, kFolds);
  report.penalty = fit.penalty();
  // Scored in the form that is served, so that the figures are those of what is written.
  const HiddenLengthHead scored = linear_form(fit);
  PredictionLog head_log(held_out);
  for (size_t i = trained; i < log.size(); ++i) {
    head_log.add(scored.predict(states[i], log[i]), log[i].generated);
  }
  report.head = score(head_log);
  // What is written learns from the whole log, held-out requests included, at the penalty
  // cross-validation chose.
  report.fitted = linear_form(RidgeRegression::fit(x, y, report.penalty));
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
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Map<const RowMajor> wm(w32.data<float>(), w32.dim(0), d);
  // WᵀW summed in double a block of rows at a time: an f32 sum over a vocabulary of 10⁵ rows
  // loses digits that the solve below would magnify, and all of W in double may not fit.
  constexpr Eigen::Index kRows = 4096;
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(d, d);
  for (Eigen::Index r = 0; r < wm.rows(); r += kRows) {
    const Eigen::MatrixXd block = wm.middleRows(r, std::min(kRows, wm.rows() - r)).cast<double>();
    gram.noalias() += block.transpose() * block;
  }
  // A vocabulary projection has full column rank; the nudge only keeps the solve defined should
  // some direction of the hidden state never reach the logits.
  gram.diagonal().array() += 1e-12 * gram.trace() / static_cast<double>(d);
  const Eigen::VectorXd z =
      gram.ldlt().solve(Eigen::Map<const Eigen::VectorXd>(head.hidden_weights.data(), d));
  std::vector<float> u(static_cast<size_t>(wm.rows()));
  for (Eigen::Index v = 0; v < wm.rows(); ++v) {
    u[static_cast<size_t>(v)] = static_cast<float>(wm.row(v).cast<double>().dot(z.transpose()));
  }
  return {.logit_weights = std::move(u),
          .max_tokens_weight = head.max_tokens_weight,
          .stop_weight = head.stop_weight,
          .bias = head.bias};
}

double logit_form_gap(const LengthHead& over_logits, const HiddenLengthHead& fitted,
                      std::span<const LengthRecord> log, const HiddenState& hidden,
                      const LogitsAfter& logits) {
  double gap = 0;
  for (const LengthRecord& r : log) {
    const LengthRecord unhinted{
        .prompt_tokens = r.prompt_tokens, .max_tokens = r.max_tokens, .has_stop = r.has_stop};
    const double served = over_logits.predict(logits(r.prompt_tokens),
                                              {.max_tokens = r.max_tokens, .has_stop = r.has_stop});
    const double expected = fitted.predict(hidden(r.prompt_tokens), unhinted);
    gap = std::max(gap, std::abs(std::log1p(served) - std::log1p(expected)));
  }
  return gap;
}

Tensor output_projection(const gguf::GgufFile& file) {
  return file.tensor(file.find_tensor("output.weight") ? "output.weight" : "token_embd.weight");
}

namespace {

// The prompt prefilled alone from position 0, returning its last row's hidden state or logits.
std::function<std::vector<float>(std::span<const int32_t>)> prompt_step(const Model& model,
                                                                        Backend& backend,
                                                                        int32_t context,
                                                                        bool output_hidden) {
  const ModelConfig& c = model.config();
  constexpr int32_t kBlockSize = 16;
  const int32_t n_blocks = (context + kBlockSize - 1) / kBlockSize;
  auto cache = std::make_shared<PagedKvCache>(KvCacheShape{.n_layers = c.n_layer,
                                                           .n_kv_heads = c.n_head_kv,
                                                           .head_dim = c.head_dim,
                                                           .block_size = kBlockSize,
                                                           .n_blocks = n_blocks},
                                              backend);
  return [&model, &backend, cache, n_blocks, output_hidden](std::span<const int32_t> prompt) {
    const auto length = static_cast<int32_t>(prompt.size());
    if (length == 0 || length > n_blocks * kBlockSize) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "a prompt of " + std::to_string(length) + " tokens does not fit the " +
                      std::to_string(n_blocks * kBlockSize) + "-token context");
    }
    const int32_t n_vocab = model.config().n_vocab;
    for (const int32_t id : prompt) {
      if (id < 0 || id >= n_vocab) {
        throw Error(ErrorCategory::kInvalidArgument,
                    "token id " + std::to_string(id) + " is outside the model's vocabulary of " +
                        std::to_string(n_vocab) + " (was the log written by another model?)");
      }
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
                          .output_hidden = output_hidden,
                          .context_size = n_blocks * kBlockSize};
    return run_step(model, backend, *cache, input);
  };
}

}  // namespace

HiddenState prompt_hidden_state(const Model& model, Backend& backend, int32_t context) {
  return prompt_step(model, backend, context, true);
}

LogitsAfter prompt_logits(const Model& model, Backend& backend, int32_t context) {
  return prompt_step(model, backend, context, false);
}

}  // namespace baton
