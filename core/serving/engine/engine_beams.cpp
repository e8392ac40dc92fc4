// Beam search over the engine's sequences: the beams of a request are sequences that share KV
// blocks copy-on-write, and a search step runs once every live beam has its logits.

#include <map>

#include "core/serving/engine/engine.h"
#include "core/serving/engine/stop_check.h"

namespace baton {

void Engine::advance_beams(Request& request, SamplingState& s, std::span<const float> logits,
                           std::vector<SequenceUpdate>& updates, StepResults& results) {
  const GenerationParams& params = request.params;
  const uint64_t id = scheduler_.planned(s.seq).id;  // `s` may end below
  if (!request.beams.report(s.seq, beam_candidates(s, logits, 2 * params.beam_width),
                            request.sequences.size())) {
    return;
  }
  std::vector<double> cumulative;
  std::vector<SeqId> live;
  for (const auto& beam : request.sequences) {
    cumulative.push_back(beam->cumulative_logprob);
    live.push_back(beam->seq);
  }
  const std::vector<std::vector<TokenLogprob>> top = request.beams.take(live);
  const auto end_token = [&](int32_t token) { return is_stop_token(params, tokenizer_, token); };
  const auto ends = [&](size_t parent, int32_t token) {
    const Sampler& sampler = *request.sequences[parent]->sampler;
    return end_token(token) || (sampler.has_grammar() && sampler.grammar_ends_after(token));
  };
  const BeamSelection selection = select_beams(cumulative, top, params.beam_width, ends);

  // The live beams as the step left them: the parents of this search step's children.
  std::vector<const Sequence*> parents;
  for (SeqId seq : live) parents.push_back(&scheduler_.planned(seq));
  const auto generated_after = [&](size_t parent, int32_t token) {
    const Sequence& p = *parents[parent];
    std::vector<int32_t> tokens(p.tokens.begin() + p.prompt_length, p.tokens.end());
    tokens.push_back(token);
    return tokens;
  };
  for (const BeamChoice& c : selection.finished) {
    std::vector<int32_t> tokens = generated_after(c.parent, c.token);
    const double score = beam_score(c.cumulative_logprob, tokens.size(), params.length_penalty);
    request.beams.finish(
        {std::move(tokens), c.cumulative_logprob, score, FinishReason::kStop, !end_token(c.token)});
  }

  // The first child of a beam continues in the beam's own sequence; further children are forks
  // taken before any child appends its token.
  const size_t n_parents = request.sequences.size();
  std::vector<SamplingState*> children;
  std::map<const SamplingState*, const BeamChoice*> choice_of;
  std::vector<bool> continued(n_parents, false);
  for (const BeamChoice& c : selection.live) {
    SamplingState& parent = *request.sequences[c.parent];
    if (!continued[c.parent]) {
      continued[c.parent] = true;
      children.push_back(&parent);
    } else {
      children.push_back(&fork(request, parent, 0, results));
    }
    choice_of[children.back()] = &c;
  }
  for (size_t i = 0; i < selection.live.size(); ++i) {
    Sampler& sampler = *children[i]->sampler;
    if (sampler.has_grammar()) {
      const double before = sampler.grammar_seconds();
      sampler.accept_grammar(selection.live[i].token);
      grammar_.count_engine_seconds(sampler.grammar_seconds() - before);
    }
    results.tokens.push_back({children[i]->seq, selection.live[i].token});
    children[i]->cumulative_logprob = selection.live[i].cumulative_logprob;
    ++counters_.generated_tokens;
  }
  std::vector<SamplingState*> ended;
  for (size_t p = 0; p < n_parents; ++p) {
    if (!continued[p]) ended.push_back(request.sequences[p].get());
  }
  for (SamplingState* beam : ended) remove_sequence(request, beam, &results);

  // Every live beam has as many tokens as the others: the first one says whether they are at
  // their length.
  bool at_length = false;
  if (!request.sequences.empty()) {
    const SamplingState& front = *request.sequences.front();
    const BeamChoice& c = *choice_of.at(&front);
    const Sequence& parent = *parents[c.parent];
    const SampledToken sampled{.token = c.token,
                               .generated = parent.generated() + 1,
                               .length = static_cast<int32_t>(parent.tokens.size()) + 1,
                               .grammar_finished = front.sampler->grammar_finished()};
    at_length =
        finish_after(params, tokenizer_, sampled, config_.context_size) == FinishReason::kLength;
  }
  if (at_length) {
    for (const auto& beam : request.sequences) {
      const BeamChoice& c = *choice_of.at(beam.get());
      std::vector<int32_t> tokens = generated_after(c.parent, c.token);
      const double cumulative_logprob = beam->cumulative_logprob;
      const double score = beam_score(cumulative_logprob, tokens.size(), params.length_penalty);
      request.beams.finish({std::move(tokens), cumulative_logprob, score, FinishReason::kLength});
    }
  }
  if (at_length || request.sequences.empty() ||
      request.beams.finished() >= static_cast<size_t>(params.beam_width)) {
    finish_beams(id, request, updates, results);
  }
}

std::vector<TokenLogprob> Engine::beam_candidates(SamplingState& s, std::span<const float> logits,
                                                  int32_t count) {
  if (!s.sampler->has_grammar()) return baton::beam_candidates(logits, count);
  const double before = s.sampler->grammar_seconds();
  s.sampler->grammar_mask(beam_mask_);
  grammar_.count_engine_seconds(s.sampler->grammar_seconds() - before);
  return baton::beam_candidates(logits, count, &beam_mask_);
}

void Engine::finish_beams(uint64_t id, Request& request, std::vector<SequenceUpdate>& updates,
                          StepResults& results) {
  while (!request.sequences.empty()) {
    remove_sequence(request, request.sequences.back().get(), &results);
  }
  // Without a grammar beam_width >= n beams always finish; a grammar may allow fewer outputs
  // (or none from where the beams stand). Thrown before any update: the request fails alone.
  std::vector<FinishedBeam> beams = request.beams.best(request.params.n);
  for (size_t rank = 0; rank < beams.size(); ++rank) {
    updates.push_back({.id = id,
                       .sample = static_cast<int32_t>(rank),
                       .new_tokens = std::move(beams[rank].tokens),
                       .cumulative_logprob = beams[rank].cumulative_logprob,
                       .finished = true,
                       .finish_reason = beams[rank].reason,
                       .last_token_is_text = beams[rank].last_token_is_text});
  }
}

}  // namespace baton
