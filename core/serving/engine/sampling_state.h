#pragma once

#include <cstdint>
#include <memory>

#include "core/serving/engine/step_plan.h"
#include "core/serving/sampling/sampler.h"

namespace baton {

// The sampling side of one sequence, which the engine keeps per live sample or beam: which of its
// request's completions it is, its sampler (with its grammar's state) and the log-probability of
// what it generated. The scheduler's side, under the same id, is the Sequence it owns
// (sequence.h): tokens, KV blocks, progress.
struct SamplingState {
  SeqId seq = 0;
  int32_t sample = 0;  // which of the request's samples (beams number from 0 too)
  std::unique_ptr<Sampler> sampler;
  double cumulative_logprob = 0;  // of the generated tokens, under the raw model distribution
};

}  // namespace baton
