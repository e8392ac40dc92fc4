#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "baton/engine_stats.h"
#include "baton/generation.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "core/serving/engine/grammar_cache.h"
#include "core/serving/engine/mask_preparer.h"
#include "core/serving/sampling/grammar_constraint.h"
#include "core/serving/sampling/sampler.h"

namespace baton {

// Structured outputs for the engine: requests' grammars compiled once per text for this
// vocabulary, the token masks of a step computed beside the model on a thread of their own
// (LLMOptions::grammar_masks), and the seconds grammars took, wherever they ran.
class GrammarService {
 public:
  GrammarService(const Tokenizer& tokenizer, bool masks_beside_step)
      : tokenizer_(tokenizer), beside_step_(masks_beside_step) {}

  // The request's grammar; null without one. Throws Error(kInvalidArgument) naming a grammar
  // error, or a grammar that matches only the empty text when ignore_eos leaves no way to end.
  std::unique_ptr<GrammarConstraint> compile(const GenerationParams& params);
  // Runs `step` with the masks of the samplers that will sample its logits computed beside it,
  // when masks go beside the step; until it returns none of their grammars is touched.
  void beside(const std::vector<Sampler*>& sampling, const std::function<void()>& step);
  // Grammar work the engine's own thread did.
  void count_engine_seconds(double seconds) {
    seconds_ += seconds;
    engine_seconds_ += seconds;
  }
  void fill(EngineStats& stats) const;

 private:
  const Tokenizer& tokenizer_;
  const bool beside_step_;
  std::shared_ptr<const TokenPieces> token_pieces_;  // built at the first grammar
  GrammarCache grammars_;
  double seconds_ = 0, engine_seconds_ = 0;
  MaskPreparer masks_;  // last: its thread ends before the rest
};

}  // namespace baton
