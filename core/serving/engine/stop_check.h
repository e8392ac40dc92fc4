#pragma once

#include <cstdint>
#include <optional>

#include "baton/generation.h"
#include "core/formats/tokenizer/tokenizer.h"

namespace baton {

// An end-of-generation token (unless ignore_eos) or one of the request's stop_token_ids.
bool is_stop_token(const GenerationParams& params, const Tokenizer& tokenizer, int32_t token);

// A sample as its newest token leaves it.
struct SampledToken {
  int32_t token = 0;
  int32_t generated = 0;  // tokens after the prompt, this one included
  int32_t length = 0;     // prompt and generated
  bool grammar_finished = false;
};

// Why a sample ends after its newest token: a stop token or the end of its grammar (kStop),
// max_tokens or a full context (kLength); nothing while it goes on.
std::optional<FinishReason> finish_after(const GenerationParams& params, const Tokenizer& tokenizer,
                                         const SampledToken& sampled, int32_t context_size);

}  // namespace baton
