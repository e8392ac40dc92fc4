#pragma once

#include <cstdint>
#include <memory>

#include "core/serving/engine/sequence.h"
#include "core/serving/sampling/sampler.h"

namespace baton {

// The sampling side of one sequence: which of its request's completions it is, its sampler
// (with its grammar's state) and the log-probability of what it generated. The scheduler never
// sees it; the sampled tokens reach the scheduler's side through Sequence::tokens.
struct SamplingState {
  int32_t sample = 0;  // which of the request's samples (beams number from 0 too)
  std::unique_ptr<Sampler> sampler;
  double cumulative_logprob = 0;  // of the generated tokens, under the raw model distribution
};

// One live sample or beam of a request: the scheduler's state and the sampler's.
struct LiveSequence {
  std::unique_ptr<Sequence> state;  // the scheduler holds it by pointer while it is added
  SamplingState sampling;
};

}  // namespace baton
