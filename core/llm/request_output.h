#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "baton/llm.h"
#include "core/engine/engine.h"
#include "core/engine/stop_matcher.h"
#include "core/tokenizer/tokenizer.h"

namespace baton {

// Turns the engine's token updates for one request into its completions: incremental
// detokenization, stop strings, streaming, and the choice of the n best of best_of samples.
class RequestOutput {
 public:
  using Clock = std::chrono::steady_clock;

  RequestOutput(const Tokenizer& tokenizer, std::vector<int32_t> prompt,
                const GenerationParams& params);

  // Takes one update. A stop string ends that sample in `engine`; `on_text`, when set, receives
  // the sample's new text, and declining it aborts the whole request.
  void apply(const SequenceUpdate& update, Engine& engine, const TextCallback& on_text);
  // The result; timings count from `start`, the submission.
  GenerationOutput output(Clock::time_point start);

 private:
  struct Sample {
    Completion out;
    IncrementalDetokenizer detokenizer;
    StopMatcher stops;
    bool done = false;
  };
  Sample& sample(int32_t index);

  const Tokenizer& tokenizer_;
  std::vector<int32_t> prompt_;
  GenerationParams params_;
  std::map<int32_t, Sample> samples_;
  std::optional<Clock::time_point> first_token_, last_update_;
};

}  // namespace baton
