#include "core/serving/sampling/sampler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "baton/error.h"

namespace baton {

int32_t argmax(std::span<const float> values) {
  if (values.empty()) throw Error(ErrorCategory::kInvalidArgument, "argmax of no values");
  return static_cast<int32_t>(std::max_element(values.begin(), values.end()) - values.begin());
}

uint64_t sample_seed(uint64_t seed, int32_t index) {
  if (index == 0) return seed;
  // splitmix64 of (seed, index): nearby seeds and indices give unrelated streams.
  uint64_t z = seed + 0x9e37'79b9'7f4a'7c15ull * static_cast<uint64_t>(index);
  z = (z ^ (z >> 30)) * 0xbf58'476d'1ce4'e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d0'49bb'1331'11ebull;
  return z ^ (z >> 31);
}

Sampler::Sampler(const SamplingParams& params, std::unique_ptr<GrammarConstraint> grammar)
    : params_(params), rng_(params.seed), grammar_(std::move(grammar)) {
  if (!(params.top_p > 0.0f)) {
    throw Error(ErrorCategory::kInvalidArgument,
                "top_p must be in (0, 1], got " + std::to_string(params.top_p));
  }
  if (params.min_p >= 1.0f || std::isnan(params.min_p)) {
    throw Error(ErrorCategory::kInvalidArgument,
                "min_p must be below 1, got " + std::to_string(params.min_p));
  }
  if (!(params.repetition_penalty > 0.0f)) {
    throw Error(ErrorCategory::kInvalidArgument, "repetition_penalty must be positive, got " +
                                                     std::to_string(params.repetition_penalty));
  }
  if (std::isnan(params.temperature)) {
    throw Error(ErrorCategory::kInvalidArgument, "temperature must be a number");
  }
}

std::unique_ptr<Sampler> Sampler::fork(uint64_t seed) const {
  SamplingParams params = params_;
  params.seed = seed;
  return std::make_unique<Sampler>(
      params, grammar_ ? std::make_unique<GrammarConstraint>(*grammar_) : nullptr);
}

void Sampler::apply_repetition_penalty(std::vector<Candidate>& candidates,
                                       std::span<const int32_t> history) const {
  const size_t window = params_.repeat_last_n < 0
                            ? history.size()
                            : std::min(history.size(), static_cast<size_t>(params_.repeat_last_n));
  const std::unordered_set<int32_t> recent(history.end() - window, history.end());
  for (int32_t id : recent) {
    if (id < 0 || static_cast<size_t>(id) >= candidates.size()) continue;
    float& logit = candidates[id].logit;
    logit = logit > 0 ? logit / params_.repetition_penalty : logit * params_.repetition_penalty;
  }
}

void Sampler::apply_presence_frequency(std::vector<Candidate>& candidates,
                                       std::span<const int32_t> generated) const {
  std::unordered_map<int32_t, int32_t> counts;
  for (int32_t id : generated) ++counts[id];
  for (const auto& [id, count] : counts) {
    if (id < 0 || static_cast<size_t>(id) >= candidates.size()) continue;
    candidates[id].logit -= params_.presence_penalty + params_.frequency_penalty * count;
  }
}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> history,
                        size_t prompt_length) {
  if (logits.empty()) throw Error(ErrorCategory::kInvalidArgument, "sampling from no logits");
  candidates_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    candidates_[i] = {static_cast<int32_t>(i), logits[i]};
  }
  if (params_.repetition_penalty != 1.0f) apply_repetition_penalty(candidates_, history);
  if ((params_.presence_penalty != 0.0f || params_.frequency_penalty != 0.0f) &&
      prompt_length < history.size()) {
    apply_presence_frequency(candidates_, history.subspan(prompt_length));
  }
  if (!grammar_) return draw();
  const auto start = std::chrono::steady_clock::now();
  apply_grammar();
  const auto masked = std::chrono::steady_clock::now();
  const int32_t token = draw();
  const auto drawn = std::chrono::steady_clock::now();
  grammar_->accept(token);
  grammar_seconds_ +=
      std::chrono::duration<double>(masked - start).count() +
      std::chrono::duration<double>(std::chrono::steady_clock::now() - drawn).count();
  return token;
}

void Sampler::grammar_mask(std::vector<char>& allowed) {
  const auto start = std::chrono::steady_clock::now();
  grammar_->allowed(allowed);
  grammar_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Sampler::accept_grammar(int32_t token) {
  const auto start = std::chrono::steady_clock::now();
  grammar_->accept(token);
  grammar_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool Sampler::grammar_ends_after(int32_t token) const {
  GrammarConstraint after = *grammar_;
  after.accept(token);
  return after.finished();
}

void Sampler::apply_grammar() {
  grammar_->allowed(allowed_);
  std::erase_if(candidates_, [&](const Candidate& c) {
    return static_cast<size_t>(c.id) >= allowed_.size() || !allowed_[c.id];
  });
  if (candidates_.empty()) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the grammar allows no token of this vocabulary here (a character no token "
                "spells, or an end the request may not reach with ignore_eos)");
  }
}

int32_t Sampler::draw() {
  auto by_logit = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  if (params_.temperature <= 0.0f) {
    return std::min_element(candidates_.begin(), candidates_.end(), by_logit)->id;
  }

  size_t keep = candidates_.size();
  if (params_.top_k > 0) keep = std::min(keep, static_cast<size_t>(params_.top_k));
  std::partial_sort(candidates_.begin(), candidates_.begin() + keep, candidates_.end(), by_logit);

  // Probabilities at temperature 1 decide the top-p and min-p cut-offs, as in llama.cpp.
  std::vector<double> probs(keep);
  const double max_logit = candidates_[0].logit;
  double total = 0;
  for (size_t i = 0; i < keep; ++i) total += probs[i] = std::exp(candidates_[i].logit - max_logit);
  if (params_.top_p < 1.0f) {
    double cumulative = 0;
    for (size_t i = 0; i < keep; ++i) {
      cumulative += probs[i] / total;
      if (cumulative >= params_.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  if (params_.min_p > 0.0f) {
    size_t above = 1;
    while (above < keep && probs[above] >= params_.min_p * probs[0]) ++above;
    keep = above;
  }

  std::vector<double> weights(keep);
  for (size_t i = 0; i < keep; ++i) {
    weights[i] = std::exp((candidates_[i].logit - max_logit) / params_.temperature);
  }
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  return candidates_[pick(rng_)].id;
}

}  // namespace baton
