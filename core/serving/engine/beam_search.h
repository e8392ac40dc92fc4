#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "baton/generation.h"
#include "core/serving/engine/step_plan.h"

namespace baton {

// One live beam extended by one token.
struct BeamChoice {
  size_t parent = 0;  // index of the extended beam among the live ones
  int32_t token = 0;
  double cumulative_logprob = 0;
};

struct BeamSelection {
  std::vector<BeamChoice> live;      // at most `width`, best first
  std::vector<BeamChoice> finished;  // the chosen token ends generation
};

// One step of beam search as vLLM and Hugging Face run it. `top[b]` holds live beam b's 2 *
// width most likely next tokens (twice as many as kept, so that enough remain when some end);
// every candidate is ranked by its cumulative logprob. Walking the ranking, a candidate that
// ends generation becomes a finished beam if it ranks among the first `width`, otherwise it is
// dropped; any other candidate stays live until `width` beams are live. Ties go to the lower
// beam index, then the likelier token.
BeamSelection select_beams(std::span<const double> cumulative,
                           std::span<const std::vector<TokenLogprob>> top, int32_t width,
                           const std::function<bool(size_t parent, int32_t token)>& ends);

// A finished beam's rank: cumulative_logprob / length^length_penalty over its generated tokens
// (the ending token included), so that penalties above 0 stop favouring short beams.
double beam_score(double cumulative_logprob, size_t length, float length_penalty);

// A beam's `count` likeliest next tokens. Under a grammar (`allowed`: a flag per token id, ids
// past its end disallowed) a beam ranks the tokens the grammar allows, by their share among
// those; a disallowed token is never a candidate.
std::vector<TokenLogprob> beam_candidates(std::span<const float> logits, int32_t count,
                                          const std::vector<char>* allowed = nullptr);

// A beam that ended: its generated tokens (the ending one included) and its rank.
struct FinishedBeam {
  std::vector<int32_t> tokens;
  double cumulative_logprob = 0;
  double score = 0;
  FinishReason reason = FinishReason::kStop;
  bool last_token_is_text = false;  // ended where its grammar allows nothing more
};

// One request's search between its steps: the candidates of the live beams whose logits have
// arrived (a step of the search runs once every live beam's have) and the beams that ended.
class BeamSearch {
 public:
  // Records beam `seq`'s candidates; true once each of the `live` beams has reported.
  bool report(SeqId seq, std::vector<TokenLogprob> candidates, size_t live);
  // The reported candidates of `beams`, in that order, and forgets every report.
  std::vector<std::vector<TokenLogprob>> take(std::span<const SeqId> beams);
  // Drops a beam's report: it ended, or it was preempted and reports again once recomputed.
  void forget(SeqId seq) { candidates_.erase(seq); }

  void finish(FinishedBeam beam) { finished_.push_back(std::move(beam)); }
  size_t finished() const { return finished_.size(); }
  // The `n` best ended beams by score, best first, ties in the order they ended. Error
  // (kInvalidArgument) when fewer than n ended: a grammar may allow fewer outputs than asked for.
  std::vector<FinishedBeam> best(int32_t n);

 private:
  std::map<SeqId, std::vector<TokenLogprob>> candidates_;
  std::vector<FinishedBeam> finished_;
};

}  // namespace baton
