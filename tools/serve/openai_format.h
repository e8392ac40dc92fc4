#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "baton/async_llm.h"

namespace baton::serve {

// `json` as text; bytes that are not UTF-8 (a lone byte token) become U+FFFD instead of failing.
std::string json_text(const nlohmann::json& json);

// A fresh id such as "cmpl-5f0c..." for a response.
std::string new_response_id(const char* prefix);
int64_t unix_seconds();

// Token counts over a response's requests, as OpenAI's `usage` object.
struct Usage {
  void add(const GenerationOutput& output);
  nlohmann::json to_json() const;

  int64_t prompt_tokens = 0, completion_tokens = 0, cached_tokens = 0;
};

// Log-probabilities in the completions API's form: tokens, token_logprobs, top_logprobs (a
// token -> logprob map of at most `top` alternatives each) and text_offset, counting offsets
// from `text_offset`.
nlohmann::json completion_logprobs(const std::vector<TokenLogprobs>& tokens, const AsyncLLM& llm,
                                   size_t text_offset, int32_t top);
// Log-probabilities in the chat API's form: {"content": [{token, logprob, bytes,
// top_logprobs: [...]}]}, with at most `top` alternatives each.
nlohmann::json chat_logprobs(const std::vector<TokenLogprobs>& tokens, const AsyncLLM& llm,
                             int32_t top);

}  // namespace baton::serve
