#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "baton/generation.h"

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

}  // namespace baton
