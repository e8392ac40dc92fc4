#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "baton/sampling_params.h"
#include "core/serving/sampling/grammar_constraint.h"

namespace baton {

// Picks the next token from one sequence's logits. The chain is: repetition penalty, the
// grammar's mask when there is one, top-k, top-p, min-p, temperature, then a draw from a
// generator seeded per request.
class Sampler {
 public:
  explicit Sampler(const SamplingParams& params,
                   std::unique_ptr<GrammarConstraint> grammar = nullptr);

  // A sampler for a parallel sample: the same parameters drawing from `seed`, and the grammar
  // where this one stands.
  std::unique_ptr<Sampler> fork(uint64_t seed) const;

  // `history` holds the sequence's tokens so far, the first `prompt_length` of them the prompt:
  // the repetition penalty looks at all of them, presence and frequency penalties at the rest.
  int32_t sample(std::span<const float> logits, std::span<const int32_t> history,
                 size_t prompt_length = 0);

  const SamplingParams& params() const { return params_; }
  // The grammar allows nothing more: generation ends here.
  bool grammar_finished() const { return grammar_ && grammar_->finished(); }
  // Time spent on the grammar so far (its masks and its moves), for the engine's statistics.
  double grammar_seconds() const { return grammar_seconds_; }
  // Computes the grammar's mask for the next sample ahead of it, where there is a grammar
  // (GrammarConstraint::prepare); untimed: the caller times its own thread.
  void prepare_grammar_mask() {
    if (grammar_) grammar_->prepare();
  }

  // For beam search, which ranks tokens itself: the grammar's mask (every token allowed
  // without one), the move past a chosen token, and whether the grammar allows nothing more
  // after `token` (a beam that ends with text).
  bool has_grammar() const { return grammar_ != nullptr; }
  void grammar_mask(std::vector<char>& allowed);
  void accept_grammar(int32_t token);
  bool grammar_ends_after(int32_t token) const;

 private:
  struct Candidate {
    int32_t id;
    float logit;
  };
  void apply_repetition_penalty(std::vector<Candidate>& candidates,
                                std::span<const int32_t> history) const;
  void apply_presence_frequency(std::vector<Candidate>& candidates,
                                std::span<const int32_t> generated) const;
  void apply_grammar();
  // The chain's draw from candidates_.
  int32_t draw();

  SamplingParams params_;
  std::mt19937_64 rng_;
  std::vector<Candidate> candidates_;  // reused across calls to avoid a vocab-sized allocation
  std::unique_ptr<GrammarConstraint> grammar_;
  std::vector<char> allowed_;  // the grammar's mask, reused likewise
  double grammar_seconds_ = 0;
};

// The seed of a request's sample `index` (parallel samples each draw from their own
// generator): sample 0 keeps the request's seed, so n=1 is unchanged.
uint64_t sample_seed(uint64_t seed, int32_t index);

// Index of the largest value; the first one on ties.
int32_t argmax(std::span<const float> values);

}  // namespace baton
