#pragma once

#include <cstdint>
#include <span>

#include "baton/generation.h"
#include "baton/llm_options.h"

namespace baton {

// How many completions the engine reports for a request (sample indices or ranks 0..count-1):
// best_of samples, of which the caller keeps the n best, or the n best beams.
int32_t reported_completions(const GenerationParams& params);

// Throws Error(kInvalidArgument) naming what is wrong with a request before it is queued: an
// empty prompt, a token outside the vocabulary, a priority the scheduling policy does not use,
// or parameters out of range.
void check_request(std::span<const int32_t> prompt, const GenerationParams& params,
                   int32_t priority, const LLMOptions& options, int32_t n_vocab);

}  // namespace baton
