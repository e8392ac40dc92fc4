#include "core/serving/engine/request_checks.h"

#include <string>

#include "baton/error.h"

namespace baton {
namespace {

constexpr int32_t kMaxLogprobs = 20;

void check_params(const GenerationParams& params) {
  const auto bad = [](const std::string& field, int32_t value, const std::string& why) {
    throw Error(ErrorCategory::kInvalidArgument,
                field + " " + why + ", got " + std::to_string(value));
  };
  if (params.max_tokens < 0) bad("max_tokens", params.max_tokens, "must not be negative");
  if (params.n < 1) bad("n", params.n, "must be at least 1");
  if (params.expected_tokens < 0) {
    bad("expected_tokens", params.expected_tokens, "must not be negative");
  }
  if (params.best_of != 0 && params.best_of < params.n) {
    bad("best_of", params.best_of, "must be 0 (= n) or at least n = " + std::to_string(params.n));
  }
  if (params.logprobs < 0 || params.logprobs > kMaxLogprobs) {
    bad("logprobs", params.logprobs, "must be in [0, " + std::to_string(kMaxLogprobs) + "]");
  }
  if (params.use_beam_search) {
    if (params.beam_width < 1) bad("beam_width", params.beam_width, "must be at least 1");
    if (params.n > params.beam_width) {
      bad("n", params.n, "must not exceed beam_width = " + std::to_string(params.beam_width));
    }
    // A beam's per-token alternatives would have to follow it through every fork.
    if (params.logprobs > 0) bad("logprobs", params.logprobs, "is not supported with beam search");
  }
}

}  // namespace

int32_t reported_completions(const GenerationParams& params) {
  if (params.use_beam_search) return params.n;
  return params.best_of > 0 ? params.best_of : params.n;
}

void check_request(std::span<const int32_t> prompt, const GenerationParams& params,
                   int32_t priority, const LLMOptions& options, int32_t n_vocab) {
  if (prompt.empty()) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the prompt is empty and the model adds no BOS token to start from");
  }
  check_params(params);
  if (priority != 0 && options.scheduling_policy != SchedulingPolicy::kPriority) {
    throw Error(ErrorCategory::kInvalidArgument,
                "request priority " + std::to_string(priority) +
                    " needs the priority scheduling policy (scheduling_policy priority)");
  }
  for (int32_t id : prompt) {
    if (id < 0 || id >= n_vocab) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "prompt token " + std::to_string(id) + " is outside the vocabulary");
    }
  }
}

}  // namespace baton
