#include "core/serving/engine/grammar_service.h"

#include <vector>

#include "baton/error.h"

namespace baton {

std::unique_ptr<GrammarConstraint> GrammarService::compile(const GenerationParams& params) {
  if (params.grammar.empty()) return nullptr;
  const SharedGrammar shared = grammars_.get(params.grammar);
  if (!token_pieces_) token_pieces_ = TokenPieces::of(tokenizer_);
  auto constraint = std::make_unique<GrammarConstraint>(shared, token_pieces_, !params.ignore_eos,
                                                        params.stop_token_ids);
  if (constraint->finished() && params.ignore_eos) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the grammar matches only the empty text, and ignore_eos leaves no way to end");
  }
  return constraint;
}

void GrammarService::beside(const std::vector<Sampler*>& sampling,
                            const std::function<void()>& step) {
  std::vector<Sampler*> constrained;
  for (Sampler* sampler : sampling) {
    if (beside_step_ && sampler->has_grammar()) constrained.push_back(sampler);
  }
  MaskPreparer::Step masks = masks_.start(std::move(constrained));
  step();
  const MaskPreparer::Seconds seconds = masks.finish();
  seconds_ += seconds.work;
  engine_seconds_ += seconds.waited;
}

void GrammarService::fill(EngineStats& stats) const {
  stats.grammar_seconds = seconds_;
  stats.grammar_engine_seconds = engine_seconds_;
}

}  // namespace baton
