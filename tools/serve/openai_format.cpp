#include "tools/serve/openai_format.h"

#include <chrono>
#include <cstdio>
#include <random>
#include <utility>

namespace baton::serve {

std::string json_text(const nlohmann::json& json) {
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string new_response_id(const char* prefix) {
  thread_local std::mt19937_64 random(std::random_device{}());
  char id[64];
  std::snprintf(id, sizeof(id), "%s-%016llx%08llx", prefix,
                static_cast<unsigned long long>(random()),
                static_cast<unsigned long long>(random() & 0xffffffffu));
  return id;
}

int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Usage::add(const GenerationOutput& output) {
  prompt_tokens += static_cast<int64_t>(output.prompt_tokens.size());
  for (const Completion& c : output.completions) {
    completion_tokens += static_cast<int64_t>(c.tokens.size());
  }
  cached_tokens += output.metrics.cached_prompt_tokens;
}

nlohmann::json Usage::to_json() const {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", cached_tokens}}}};
}

nlohmann::json completion_logprobs(const std::vector<TokenLogprobs>& tokens, const AsyncLLM& llm,
                                   size_t text_offset, int32_t top) {
  nlohmann::json texts = nlohmann::json::array(), chosen = nlohmann::json::array(),
                 tops = nlohmann::json::array(), offsets = nlohmann::json::array();
  for (const TokenLogprobs& t : tokens) {
    const std::string text = llm.token_text(t.chosen.token);
    texts.push_back(text);
    chosen.push_back(t.chosen.logprob);
    nlohmann::json alternatives = nlohmann::json::object();
    for (size_t i = 0; i < t.top.size() && std::cmp_less(i, top); ++i) {
      alternatives[llm.token_text(t.top[i].token)] = t.top[i].logprob;
    }
    tops.push_back(std::move(alternatives));
    offsets.push_back(text_offset);
    text_offset += text.size();
  }
  return {{"tokens", std::move(texts)},
          {"token_logprobs", std::move(chosen)},
          {"top_logprobs", std::move(tops)},
          {"text_offset", std::move(offsets)}};
}

namespace {

nlohmann::json token_entry(const TokenLogprob& t, const AsyncLLM& llm) {
  const std::string text = llm.token_text(t.token);
  return {{"token", text},
          {"logprob", t.logprob},
          {"bytes", std::vector<uint8_t>(text.begin(), text.end())}};
}

}  // namespace

nlohmann::json chat_logprobs(const std::vector<TokenLogprobs>& tokens, const AsyncLLM& llm,
                             int32_t top) {
  nlohmann::json content = nlohmann::json::array();
  for (const TokenLogprobs& t : tokens) {
    nlohmann::json entry = token_entry(t.chosen, llm);
    nlohmann::json alternatives = nlohmann::json::array();
    for (size_t i = 0; i < t.top.size() && static_cast<int32_t>(i) < top; ++i) {
      alternatives.push_back(token_entry(t.top[i], llm));
    }
    entry["top_logprobs"] = std::move(alternatives);
    content.push_back(std::move(entry));
  }
  return {{"content", std::move(content)}};
}

}  // namespace baton::serve
