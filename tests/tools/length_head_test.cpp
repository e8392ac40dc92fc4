#include "tools/length_head/length_head_eval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <random>

#include "baton/error.h"
#include "core/api/loaded_model.h"
#include "core/runtime/half.h"
#include "core/serving/engine/step_runner.h"
#include "core/serving/kv_cache/paged_kv_cache.h"
#include "tests/temp_file.h"
#include "tests/test_data.h"
#include "tools/length_head/ridge_regression.h"

namespace baton {
namespace {

LLMOptions demo_options() {
  return {.model = testing::demo_model().string(), .backend = "cpu", .threads = 2};
}

std::vector<int32_t> tokens_of(const LoadedModel& loaded, const std::string& text, bool bos) {
  return loaded.tokenizer->encode(text, bos, false);
}

// The head's features are what the vocabulary projection reads: projected by the demo model's
// output weights (f16, widened exactly) in double, they give the step's logits to within the
// f32 sums of 256 products.
TEST(LengthHead, HiddenStateIsWhatTheOutputProjectionReads) {
  const LoadedModel loaded(demo_options());
  const ModelConfig& c = loaded.model->config();
  const std::vector<int32_t> prompt = tokens_of(loaded, "And God said, Let there be light", true);
  const std::vector<float> hidden =
      prompt_hidden_state(*loaded.model, *loaded.backend, 256)(prompt);
  ASSERT_EQ(static_cast<int64_t>(hidden.size()), c.n_embd);
  const PagedKvCache cache({c.n_layer, c.n_head_kv, c.head_dim, 16, 16}, *loaded.backend);
  SoloSequence sequence(*loaded.model, *loaded.backend, cache);
  const std::vector<float> logits =
      sequence.step(prompt, {static_cast<int32_t>(prompt.size()) - 1});
  const Tensor output = output_projection(loaded.file);
  ASSERT_EQ(output.dtype(), DType::kF16);
  const auto* w = output.data<uint16_t>();
  for (int64_t v = 0; v < c.n_vocab; ++v) {
    double expected = 0;
    for (int64_t i = 0; i < c.n_embd; ++i)
      expected += double{fp16_to_fp32(w[v * c.n_embd + i])} * hidden[i];
    ASSERT_NEAR(logits[static_cast<size_t>(v)], expected, 1e-4 + 1e-4 * std::abs(expected))
        << "token " << v;
  }
}

// Every prompt is the same 32 tokens (two whole KV blocks, what the online predictor keys on)
// and then one of four words in the third block, which alone decides the answer's length: the
// hidden state sees the word, the online predictor cannot.
std::vector<LengthRecord> log_where_a_last_word_decides(const LoadedModel& loaded) {
  std::vector<int32_t> shared = tokens_of(
      loaded,
      "In the beginning God created the heaven and the earth. And the earth was without form, "
      "and void; and darkness was upon the face of the deep. And the Spirit of God moved.",
      true);
  EXPECT_GE(shared.size(), 32u);
  shared.resize(32);
  const std::vector<std::pair<std::string, int32_t>> words = {
      {" Moses", 10}, {" Israel", 14}, {" Aaron", 180}, {" Egypt", 220}};
  std::mt19937 rng(7);
  std::vector<LengthRecord> log;
  for (int i = 0; i < 120; ++i) {
    const auto& [word, length] = words[rng() % words.size()];
    LengthRecord r{.prompt_tokens = shared, .max_tokens = 256, .generated = length};
    for (int32_t t : tokens_of(loaded, word, false)) r.prompt_tokens.push_back(t);
    r.generated += static_cast<int32_t>(rng() % 7) - 3;
    log.push_back(std::move(r));
  }
  return log;
}

TEST(LengthHead, LearnsWhatOnlyTheHiddenStateShows) {
  const LoadedModel loaded(demo_options());
  const LengthHeadReport report = evaluate_length_head(
      log_where_a_last_word_decides(loaded),
      prompt_hidden_state(*loaded.model, *loaded.backend, 64), {.holdout = 0.25});
  EXPECT_EQ(report.trained, 90u);
  EXPECT_EQ(report.held_out, 30u);
  EXPECT_EQ(report.hidden_size, loaded.model->config().n_embd);
  EXPECT_GT(report.head.kendall_tau, 0.4);
  EXPECT_GT(report.head.kendall_tau, report.online.kendall_tau + 0.25);
  EXPECT_LT(report.head.mean_absolute_error, 0.5 * report.online.mean_absolute_error);
  EXPECT_TRUE(report.head_wins());
}

// The head the server applies to a prompt's last logits row predicts what the fitted head
// predicts from the hidden state, to within the f32 rounding of the logits.
TEST(LengthHead, OverTheLogitsItPredictsAsOverTheHiddenState) {
  const LoadedModel loaded(demo_options());
  const ModelConfig& c = loaded.model->config();
  const std::vector<LengthRecord> log = log_where_a_last_word_decides(loaded);
  const HiddenState hidden = prompt_hidden_state(*loaded.model, *loaded.backend, 64);
  const HiddenLengthHead fitted = evaluate_length_head(log, hidden, {.holdout = 0.25}).fitted;
  const LengthHead head = head_over_logits(fitted, output_projection(loaded.file));
  ASSERT_EQ(static_cast<int64_t>(head.logit_weights.size()), c.n_vocab);
  const PagedKvCache cache({c.n_layer, c.n_head_kv, c.head_dim, 16, 4}, *loaded.backend);
  for (size_t i = 0; i < log.size(); i += 13) {
    const std::vector<int32_t>& prompt = log[i].prompt_tokens;
    const std::vector<float> h = hidden(prompt);
    double expected = fitted.bias + fitted.max_tokens_weight * std::log2(256.0);
    for (size_t j = 0; j < h.size(); ++j) expected += fitted.hidden_weights[j] * h[j];
    SoloSequence sequence(*loaded.model, *loaded.backend, cache);
    const std::vector<float> logits =
        sequence.step(prompt, {static_cast<int32_t>(prompt.size()) - 1});
    const double predicted = head.predict(logits, {.max_tokens = 256});
    EXPECT_NEAR(std::log1p(predicted), std::clamp(expected, 0.0, std::log1p(256.0)), 1e-3)
        << "request " << i;
  }
  EXPECT_LT(
      logit_form_gap(head, fitted, log, hidden, prompt_logits(*loaded.model, *loaded.backend, 64)),
      1e-3);
  EXPECT_THROW(
      head_over_logits({.hidden_weights = std::vector<double>(7)}, output_projection(loaded.file)),
      Error);
}

TEST(LengthHead, RefusesALogTooShortToHoldOutAndAPromptPastTheContext) {
  const LoadedModel loaded(demo_options());
  const HiddenState hidden = prompt_hidden_state(*loaded.model, *loaded.backend, 32);
  const std::vector<LengthRecord> short_log(8,
                                            LengthRecord{.prompt_tokens = {1, 2}, .max_tokens = 8});
  try {
    evaluate_length_head(short_log, hidden, {});
    FAIL() << "a log of 8 requests was split";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("8 requests is too short"), std::string::npos) << e.what();
  }
  const int32_t n_vocab = loaded.model->config().n_vocab;
  std::vector<LengthRecord> foreign(20, LengthRecord{.prompt_tokens = {1, 2}, .max_tokens = 8});
  foreign[6].prompt_tokens = {1, n_vocab + 5};
  try {
    evaluate_length_head(foreign, hidden, {});
    FAIL() << "a token outside the vocabulary was run";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("logged request 7: token id " + std::to_string(n_vocab + 5)),
        std::string::npos)
        << e.what();
  }
  try {
    hidden(std::vector<int32_t>(33, 5));
    FAIL() << "a prompt past the context was run";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("33 tokens"), std::string::npos) << e.what();
  }
}

// y = 2 x0 - 3 x1 + 5 plus a little noise. With more samples than features (the primal solve)
// the fit in the features' own units recovers the line; with fewer (the dual solve, 58 features
// of noise added) a tiny penalty fits the samples themselves. Either way it predicts as the
// standardized fit does.
TEST(RidgeRegression, RecoversALineInTheFeaturesOwnUnits) {
  std::mt19937 rng(3);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (const Eigen::Index features : {Eigen::Index{2}, Eigen::Index{60}}) {
    SCOPED_TRACE(features);
    const Eigen::Index n = 40;
    Eigen::MatrixXd x(n, features);
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      for (Eigen::Index j = 0; j < features; ++j) x(i, j) = 10.0 * normal(rng) + j;
      y(i) = 2 * x(i, 0) - 3 * x(i, 1) + 5 + 0.01 * normal(rng);
    }
    const std::array<double, 3> penalties = {1e-6, 1e-3, 1.0};
    const RidgeRegression fit =
        features < n ? RidgeRegression::fit(x, y, penalties, 4) : RidgeRegression::fit(x, y, 1e-9);
    if (features < n) {
      EXPECT_NEAR(fit.weights()(0), 2.0, 0.01);
      EXPECT_NEAR(fit.weights()(1), -3.0, 0.01);
    }
    for (Eigen::Index i = 0; i < n; ++i) {
      const double predicted = fit.predict(x.row(i).transpose());
      EXPECT_NEAR(predicted, fit.weights().dot(x.row(i)) + fit.bias(), 1e-9);
      if (features > n) {
        EXPECT_NEAR(predicted, y(i), 1e-3);
      }
    }
  }
}

TEST(LengthRecord, RoundTripsAndNamesTheLineOfABadRecord) {
  const testing::TempFile file("lengths.jsonl");
  const LengthRecord r{.prompt_tokens = {1, 5, 9},
                       .max_tokens = 64,
                       .has_stop = true,
                       .expected_tokens = 12,
                       .generated = 30};
  {
    std::ofstream out(file.path());
    out << to_json_line(r) << to_json_line(r);
  }
  const std::vector<LengthRecord> read = read_length_log(file.path());
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[1].prompt_tokens, r.prompt_tokens);
  EXPECT_EQ(read[1].max_tokens, 64);
  EXPECT_TRUE(read[1].has_stop);
  EXPECT_EQ(read[1].expected_tokens, 12);
  EXPECT_EQ(read[1].generated, 30);
  std::ofstream(file.path(), std::ios::app)
      << R"({"prompt_tokens": [], "max_tokens": 4, "has_stop": false, "generated": 2})"
      << "\n";
  try {
    read_length_log(file.path());
    FAIL() << "a bad record was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":3: not a length record: an empty prompt"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_length_log("/nonexistent/lengths.jsonl"), Error);
}

}  // namespace
}  // namespace baton
