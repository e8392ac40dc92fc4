#pragma once

#include <cstdint>
#include <optional>

#include "baton/generation.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "core/serving/engine/sequence.h"

namespace baton {

// An end-of-generation token (unless ignore_eos) or one of the request's stop_token_ids.
bool is_stop_token(const GenerationParams& params, const Tokenizer& tokenizer, int32_t token);

// Why a sample ends after its last token: a stop token or the end of its grammar (kStop, when
// `grammar_finished`), max_tokens or a full context (kLength); nothing while it goes on.
std::optional<FinishReason> finish_after(const GenerationParams& params, const Tokenizer& tokenizer,
                                         const Sequence& s, bool grammar_finished,
                                         int32_t context_size);

}  // namespace baton
