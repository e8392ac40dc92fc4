#include "core/serving/engine/stop_check.h"

#include <algorithm>

namespace baton {

bool is_stop_token(const GenerationParams& params, const Tokenizer& tokenizer, int32_t token) {
  const auto& stop_ids = params.stop_token_ids;
  return (!params.ignore_eos && tokenizer.is_end_of_generation(token)) ||
         std::find(stop_ids.begin(), stop_ids.end(), token) != stop_ids.end();
}

std::optional<FinishReason> finish_after(const GenerationParams& params, const Tokenizer& tokenizer,
                                         const SampledToken& sampled, int32_t context_size) {
  if (is_stop_token(params, tokenizer, sampled.token) || sampled.grammar_finished) {
    return FinishReason::kStop;
  }
  if (sampled.generated >= params.max_tokens || sampled.length >= context_size) {
    return FinishReason::kLength;
  }
  return std::nullopt;
}

}  // namespace baton
