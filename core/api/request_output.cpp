#include "core/api/request_output.h"

#include <algorithm>

namespace baton {

RequestOutput::RequestOutput(const Tokenizer& tokenizer, std::vector<int32_t> prompt,
                             const GenerationParams& params)
    : tokenizer_(tokenizer), prompt_(std::move(prompt)), params_(params) {}

RequestOutput::Sample& RequestOutput::sample(int32_t index) {
  auto it = samples_.find(index);
  if (it != samples_.end()) return it->second;
  it = samples_
           .emplace(index, Sample{.detokenizer = IncrementalDetokenizer(tokenizer_),
                                  .stops = StopMatcher(params_.stop)})
           .first;
  // The detokenizer sees the prompt so that spacing continues it.
  for (int32_t id : prompt_) it->second.detokenizer.push(id);
  return it->second;
}

namespace {

// Appends text to the completion and streams it: false when the callback wants no more.
bool emit(Completion& out, const std::string& text, const TextCallback& on_text) {
  out.text += text;
  return !on_text || text.empty() || on_text(text);
}

}  // namespace

void RequestOutput::apply(const SequenceUpdate& update, const AbortFn& abort,
                          const TextCallback& on_text) {
  record_timing(update);
  Sample& s = sample(update.sample);
  if (s.state != SampleState::kStreaming) return;
  if (!first_token_ && !update.new_tokens.empty()) first_token_ = last_update_;
  for (size_t i = 0; i < update.new_tokens.size() && s.state == SampleState::kStreaming; ++i) {
    take_token(s, update, i, abort, on_text);
  }
  s.out.cumulative_logprob = update.cumulative_logprob;
  if (update.finished && s.state == SampleState::kStreaming) finish(s, update, on_text);
}

void RequestOutput::record_timing(const SequenceUpdate& update) {
  last_update_ = Clock::now();
  if (update.first_scheduled != Clock::time_point{} && !first_scheduled_) {
    first_scheduled_ = update.first_scheduled;
    cached_prompt_tokens_ = update.cached_prompt_tokens;
  }
}

void RequestOutput::take_token(Sample& s, const SequenceUpdate& update, size_t i,
                               const AbortFn& abort, const TextCallback& on_text) {
  const int32_t token = update.new_tokens[i];
  s.out.tokens.push_back(token);
  if (i < update.logprobs.size()) s.out.logprobs.push_back(update.logprobs[i]);
  // The engine has already let go of a sample whose finishing token this is: no abort for it.
  const bool engine_ends_here = update.finished && i + 1 == update.new_tokens.size();
  // An end-of-generation or stop token ends the text without being part of it.
  if (engine_ends_here && update.finish_reason == FinishReason::kStop &&
      !update.last_token_is_text) {
    return;
  }
  const StopMatcher::Result r = s.stops.push(s.detokenizer.push(token));
  if (!emit(s.out, r.text, on_text)) {
    if (!update.finished) abort(update.id, kAllSamples);
    s.state = SampleState::kDeclined;
  } else if (r.stop) {
    if (!engine_ends_here) abort(update.id, update.sample);
    s.state = SampleState::kStopString;
  }
}

void RequestOutput::finish(Sample& s, const SequenceUpdate& update, const TextCallback& on_text) {
  // The end of the text: release what was held back for UTF-8 or stop strings.
  const StopMatcher::Result r = s.stops.push(s.detokenizer.flush());
  const bool accepted = emit(s.out, r.text + (r.stop ? "" : s.stops.flush()), on_text);
  s.state = accepted ? SampleState::kFinished : SampleState::kDeclined;
  s.engine_reason = update.finish_reason;
}

FinishReason RequestOutput::finish_reason(const Sample& s) {
  switch (s.state) {
    case SampleState::kStopString:
      return FinishReason::kStop;
    case SampleState::kFinished:
      return s.engine_reason;
    case SampleState::kDeclined:
    // A sample still streaming when the engine let go of it was aborted with its request.
    case SampleState::kStreaming:
      return FinishReason::kAborted;
  }
  return FinishReason::kAborted;
}

bool RequestOutput::done() const {
  if (samples_.size() < static_cast<size_t>(reported_completions(params_))) return false;
  return std::all_of(samples_.begin(), samples_.end(), [](const auto& entry) {
    return entry.second.state != SampleState::kStreaming;
  });
}

GenerationOutput RequestOutput::output(Clock::time_point start) {
  GenerationOutput out{.prompt_tokens = prompt_};
  size_t output_tokens = 0, longest = 0;
  for (auto& [index, s] : samples_) {
    output_tokens += s.out.tokens.size();
    longest = std::max(longest, s.out.tokens.size());
    s.out.finish_reason = finish_reason(s);
    out.completions.push_back(std::move(s.out));
  }
  if (!params_.use_beam_search && out.completions.size() > static_cast<size_t>(params_.n)) {
    std::stable_sort(out.completions.begin(), out.completions.end(),
                     [](const Completion& a, const Completion& b) {
                       return a.cumulative_logprob > b.cumulative_logprob;
                     });
    out.completions.resize(static_cast<size_t>(params_.n));
  }
  if (!out.completions.empty()) {
    out.text = out.completions.front().text;
    out.tokens = out.completions.front().tokens;
    out.finish_reason = out.completions.front().finish_reason;
  } else {
    // No completion started: the request ended before its first token.
    out.finish_reason = FinishReason::kAborted;
  }
  const Clock::time_point end = last_update_.value_or(start);
  const Clock::time_point first = first_token_.value_or(end);
  out.prompt_seconds = std::chrono::duration<double>(first - start).count();
  out.generation_seconds = std::chrono::duration<double>(end - first).count();
  const auto seconds = [&](Clock::time_point t) {
    return std::chrono::duration<double>(t - start).count();
  };
  out.metrics = RequestMetrics{
      .queue_seconds = seconds(first_scheduled_.value_or(end)),
      .ttft_seconds = out.prompt_seconds,
      .tpot_seconds = longest > 1 ? out.generation_seconds / static_cast<double>(longest - 1) : 0,
      .e2e_seconds = seconds(end),
      .prompt_tokens = static_cast<int32_t>(prompt_.size()),
      .output_tokens = static_cast<int32_t>(output_tokens),
      .cached_prompt_tokens = cached_prompt_tokens_};
  return out;
}

}  // namespace baton
