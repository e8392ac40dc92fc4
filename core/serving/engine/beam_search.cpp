#include "core/serving/engine/beam_search.h"

#include <algorithm>
#include <cmath>

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

}  // namespace baton
