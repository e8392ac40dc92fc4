#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "baton/llm.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "core/serving/engine/engine.h"
#include "core/serving/engine/stop_matcher.h"

namespace baton {

// Turns the engine's token updates for one request into its completions: incremental
// detokenization, stop strings, streaming, and the choice of the n best of best_of samples.
class RequestOutput {
 public:
  using Clock = std::chrono::steady_clock;
  // Ends engine work the output no longer wants: one sample, or the whole request when `sample`
  // is kAllSamples. LLM calls the engine; AsyncLLM queues a command for its engine thread.
  using AbortFn = std::function<void(uint64_t id, int32_t sample)>;
  static constexpr int32_t kAllSamples = -1;

  RequestOutput(const Tokenizer& tokenizer, std::vector<int32_t> prompt,
                const GenerationParams& params);

  // Takes one update. A stop string ends that sample through `abort`; `on_text`, when set,
  // receives the sample's new text, and declining it aborts the whole request.
  void apply(const SequenceUpdate& update, const AbortFn& abort, const TextCallback& on_text);
  // Every completion the engine reports for the request has ended.
  bool done() const;
  // The result; timings count from `start`, the submission.
  GenerationOutput output(Clock::time_point start);

 private:
  // A sample streams until the first of these events ends it, and that event names its finish
  // reason. An ended sample ignores later updates: tokens the engine made before it heard.
  enum class SampleState {
    kStreaming,
    kStopString,  // a stop string matched: kStop
    kDeclined,    // the streaming callback wanted no more text: kAborted
    kFinished,    // the engine ended it: the engine's reason
  };
  struct Sample {
    Completion out;
    IncrementalDetokenizer detokenizer;
    StopMatcher stops;
    SampleState state = SampleState::kStreaming;
    FinishReason engine_reason = FinishReason::kLength;  // when kFinished
  };
  Sample& sample(int32_t index);
  void record_timing(const SequenceUpdate& update);
  // Token `i` of `update`, in kStreaming; may end the sample.
  void take_token(Sample& s, const SequenceUpdate& update, size_t i, const AbortFn& abort,
                  const TextCallback& on_text);
  // The engine ended a sample that was still streaming.
  void finish(Sample& s, const SequenceUpdate& update, const TextCallback& on_text);
  static FinishReason finish_reason(const Sample& s);

  const Tokenizer& tokenizer_;
  std::vector<int32_t> prompt_;
  GenerationParams params_;
  std::map<int32_t, Sample> samples_;
  std::optional<Clock::time_point> first_token_, last_update_, first_scheduled_;
  int32_t cached_prompt_tokens_ = 0;
};

}  // namespace baton
