#include "core/serving/engine/beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "baton/error.h"
#include "core/serving/sampling/logprobs.h"

namespace baton {

BeamSelection select_beams(std::span<const double> cumulative,
                           std::span<const std::vector<TokenLogprob>> top, int32_t width,
                           const std::function<bool(size_t parent, int32_t token)>& ends) {
  struct Ranked {
    BeamChoice choice;
    size_t rank_in_parent;
  };
  std::vector<Ranked> candidates;
  for (size_t b = 0; b < top.size(); ++b) {
    for (size_t i = 0; i < top[b].size(); ++i) {
      candidates.push_back({{b, top[b][i].token, cumulative[b] + top[b][i].logprob}, i});
    }
  }
  std::sort(candidates.begin(), candidates.end(), [](const Ranked& a, const Ranked& b) {
    if (a.choice.cumulative_logprob != b.choice.cumulative_logprob)
      return a.choice.cumulative_logprob > b.choice.cumulative_logprob;
    if (a.choice.parent != b.choice.parent) return a.choice.parent < b.choice.parent;
    return a.rank_in_parent < b.rank_in_parent;
  });
  BeamSelection selection;
  for (size_t rank = 0; rank < candidates.size(); ++rank) {
    if (selection.live.size() == static_cast<size_t>(width)) break;
    const BeamChoice& c = candidates[rank].choice;
    if (!ends(c.parent, c.token)) {
      selection.live.push_back(c);
    } else if (rank < static_cast<size_t>(width)) {
      selection.finished.push_back(c);
    }
  }
  return selection;
}

double beam_score(double cumulative_logprob, size_t length, float length_penalty) {
  return cumulative_logprob / std::pow(static_cast<double>(std::max<size_t>(length, 1)),
                                       static_cast<double>(length_penalty));
}

std::vector<TokenLogprob> beam_candidates(std::span<const float> logits, int32_t count,
                                          const std::vector<char>* allowed) {
  if (!allowed) return LogSoftmax(logits).top(count);
  std::vector<float> masked(logits.begin(), logits.end());
  for (size_t id = 0; id < masked.size(); ++id) {
    if (id >= allowed->size() || !(*allowed)[id]) {
      masked[id] = -std::numeric_limits<float>::infinity();
    }
  }
  std::vector<TokenLogprob> top = LogSoftmax(masked).top(count);
  std::erase_if(top, [](const TokenLogprob& t) { return !std::isfinite(t.logprob); });
  return top;
}

bool BeamSearch::report(SeqId seq, std::vector<TokenLogprob> candidates, size_t live) {
  candidates_[seq] = std::move(candidates);
  return candidates_.size() >= live;
}

std::vector<std::vector<TokenLogprob>> BeamSearch::take(std::span<const SeqId> beams) {
  std::vector<std::vector<TokenLogprob>> top;
  for (SeqId beam : beams) top.push_back(std::move(candidates_.at(beam)));
  candidates_.clear();
  return top;
}

std::vector<FinishedBeam> BeamSearch::best(int32_t n) {
  if (finished_.size() < static_cast<size_t>(n)) {
    throw Error(ErrorCategory::kInvalidArgument,
                "beam search found " + std::to_string(finished_.size()) +
                    " of the n = " + std::to_string(n) +
                    " completions asked for: the grammar allows fewer outputs from here");
  }
  std::stable_sort(finished_.begin(), finished_.end(),
                   [](const FinishedBeam& a, const FinishedBeam& b) { return a.score > b.score; });
  finished_.resize(static_cast<size_t>(n));
  std::vector<FinishedBeam> best = std::move(finished_);
  finished_.clear();
  return best;
}

}  // namespace baton
