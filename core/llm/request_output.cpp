#include "core/llm/request_output.h"

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

void RequestOutput::apply(const SequenceUpdate& update, Engine& engine,
                          const TextCallback& on_text) {
  last_update_ = Clock::now();
  Sample& s = sample(update.sample);
  if (s.done) return;
  if (!first_token_ && !update.new_tokens.empty()) first_token_ = last_update_;
  // Appends text; a streaming callback that declines more ends the request.
  auto emit = [&](const std::string& text) {
    s.out.text += text;
    if (on_text && !text.empty() && !on_text(text)) {
      if (!update.finished) engine.abort(update.id);
      s.out.finish_reason = FinishReason::kAborted;
      s.done = true;
    }
  };
  for (size_t i = 0; i < update.new_tokens.size() && !s.done; ++i) {
    const int32_t token = update.new_tokens[i];
    s.out.tokens.push_back(token);
    if (i < update.logprobs.size()) s.out.logprobs.push_back(update.logprobs[i]);
    // An end-of-generation token ends the text without being part of it.
    const bool last = i + 1 == update.new_tokens.size();
    if (last && update.finished && update.finish_reason == FinishReason::kStop) continue;
    const StopMatcher::Result r = s.stops.push(s.detokenizer.push(token));
    emit(r.text);
    if (r.stop && !s.done) {
      if (!(last && update.finished)) engine.abort_sample(update.id, update.sample);
      s.out.finish_reason = FinishReason::kStop;
      s.done = true;
    }
  }
  s.out.cumulative_logprob = update.cumulative_logprob;
  if (update.finished && !s.done) {
    s.out.finish_reason = update.finish_reason;
    s.done = true;
    // The end of the text: release what was held back for UTF-8 or stop strings.
    const StopMatcher::Result r = s.stops.push(s.detokenizer.flush());
    emit(r.text + (r.stop ? "" : s.stops.flush()));
  }
}

GenerationOutput RequestOutput::output(Clock::time_point start) {
  GenerationOutput out{.prompt_tokens = prompt_};
  for (auto& [index, s] : samples_) {
    // A sample still open when the engine let go of it was aborted with its request.
    if (!s.done) s.out.finish_reason = FinishReason::kAborted;
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
  }
  const Clock::time_point end = last_update_.value_or(start);
  const Clock::time_point first = first_token_.value_or(end);
  out.prompt_seconds = std::chrono::duration<double>(first - start).count();
  out.generation_seconds = std::chrono::duration<double>(end - first).count();
  return out;
}

}  // namespace baton
