#include "core/serving/engine/stop_check.h"

#include <algorithm>

namespace baton {

bool is_stop_token(const GenerationParams& params, const Tokenizer& tokenizer, int32_t token) {
  const auto& stop_ids = params.stop_token_ids;
  return (!params.ignore_eos && tokenizer.is_end_of_generation(token)) ||
         std::find(stop_ids.begin(), stop_ids.end(), token) != stop_ids.end();
}

std::optional<FinishReason> finish_after(const GenerationParams& params, const Tokenizer& tokenizer,
                                         const Sequence& s, bool grammar_finished,
                                         int32_t context_size) {
  if (is_stop_token(params, tokenizer, s.tokens.back()) || grammar_finished) {
    return FinishReason::kStop;
  }
  if (s.generated() >= params.max_tokens || static_cast<int32_t>(s.tokens.size()) >= context_size) {
    return FinishReason::kLength;
  }
  return std::nullopt;
}

}  // namespace baton
