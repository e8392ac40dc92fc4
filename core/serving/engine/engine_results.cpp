// Sampling a collected step: each logit row is sampled (or advances a beam search,
// engine_beams.cpp) and finished, failed and rejected requests end, with what that changes of
// the sequences logged for the scheduler (StepResults).

#include <algorithm>
#include <map>
#include <string>

#include "baton/error.h"
#include "core/serving/engine/engine.h"
#include "core/serving/engine/request_checks.h"
#include "core/serving/engine/stop_check.h"
#include "core/serving/sampling/logprobs.h"

namespace baton {

void Engine::sample_tokens(Request& request, SamplingState& s, std::span<const float> logits,
                           std::vector<SequenceUpdate>& updates, StepResults& results) {
  // The row's sequence as the step left it: its forks below start as copies of it.
  const Sequence& row = scheduler_.planned(s.seq);
  std::vector<SamplingState*> group = {&s};
  if (!request.forked) {
    // The length head's prediction from the logits after the prompt, before any fork.
    if (lengths_.predict_after_prefill(request.length, logits, request.lora != nullptr)) {
      results.predictions.push_back({s.seq, request.length.predicted_output});
    }
    // The prompt is computed once; the other samples start from its blocks and its logits.
    request.forked = true;
    for (int32_t i = 1; i < reported_completions(request.params); ++i) {
      group.push_back(&fork(request, s, i, results));
    }
  }
  const LogSoftmax logprob(logits);
  for (SamplingState* sampling : group) {
    const double grammar_before = sampling->sampler->grammar_seconds();
    const int32_t token =
        sampling->sampler->sample(logits, row.tokens, static_cast<size_t>(row.prompt_length));
    grammar_.count_engine_seconds(sampling->sampler->grammar_seconds() - grammar_before);
    results.tokens.push_back({sampling->seq, token});
    sampling->cumulative_logprob += logprob(token);
    ++counters_.generated_tokens;
    SequenceUpdate update{.id = row.id,
                          .sample = sampling->sample,
                          .new_tokens = {token},
                          .cumulative_logprob = sampling->cumulative_logprob};
    if (request.params.logprobs > 0) {
      update.logprobs.push_back(
          {.chosen = {token, logprob(token)}, .top = logprob.top(request.params.logprobs)});
    }
    const SampledToken sampled{.token = token,
                               .generated = row.generated() + 1,
                               .length = static_cast<int32_t>(row.tokens.size()) + 1,
                               .grammar_finished = sampling->sampler->grammar_finished()};
    if (const std::optional<FinishReason> reason =
            finish_after(request.params, tokenizer_, sampled, config_.context_size)) {
      update.finished = true;
      update.finish_reason = *reason;
      update.last_token_is_text =
          *reason == FinishReason::kStop && !is_stop_token(request.params, tokenizer_, token);
      learn_length(request, sampled.generated);
      remove_sequence(request, sampling, &results);
    }
    updates.push_back(std::move(update));
  }
}

// The requests' first scheduling, and beams that report again.
Engine::RequestStarts Engine::record_starts(const StepPlan& plan) {
  for (const SequenceRef& preempted : plan.preempted) {
    // A recomputed beam reports its candidates again when its logits come back.
    requests_.at(preempted.request)->beams.forget(preempted.seq);
  }
  RequestStarts starts;
  for (const ScheduledChunk& chunk : plan.chunks) {
    Request& request = *requests_.at(chunk.request);
    if (request.first_scheduled == std::chrono::steady_clock::time_point{}) {
      request.first_scheduled = std::chrono::steady_clock::now();
      request.cached_prompt_tokens = scheduler_.planned(chunk.seq).cached_prompt_tokens;
    }
    starts.emplace(chunk.request,
                   RequestStart{request.first_scheduled, request.cached_prompt_tokens});
  }
  return starts;
}

std::vector<SequenceUpdate> Engine::consume_logits(const StepPlan& plan,
                                                   std::span<const float> logits,
                                                   StepResults& results) {
  // The logit rows, in the order of the chunks that asked for them.
  std::vector<std::pair<uint64_t, SamplingState*>> with_logits;
  for (const ScheduledChunk& chunk : plan.chunks) {
    if (chunk.needs_logits) with_logits.emplace_back(chunk.request, &planned(chunk));
  }
  std::vector<SequenceUpdate> updates;
  // Requests whose grammar failed in this step, dropped after it: siblings may follow.
  std::map<uint64_t, std::string> grammar_failures;
  const size_t n_vocab = static_cast<size_t>(model_.config().n_vocab);
  for (size_t row = 0; row < with_logits.size(); ++row) {
    const auto [id, sampling] = with_logits[row];
    SamplingState& s = *sampling;
    if (grammar_failures.contains(id)) continue;
    Request& request = *requests_.at(id);
    if (request.params.max_tokens == 0) {
      for (int32_t i = 0; i < reported_completions(request.params); ++i) {
        updates.push_back({.id = id, .sample = i, .finished = true});
      }
      drop(id, &results);
      continue;
    }
    const std::span<const float> row_logits = logits.subspan(n_vocab * row, n_vocab);
    try {
      if (request.params.use_beam_search) {
        advance_beams(request, s, row_logits, updates, results);
      } else {
        sample_tokens(request, s, row_logits, updates, results);
      }
    } catch (const Error& e) {
      // The request's own grammar (one that allows no token here, or grew past its bounds)
      // ends that request alone.
      if (e.category() != ErrorCategory::kInvalidArgument) throw;
      grammar_failures.emplace(id, e.what());
      continue;
    }
    if (request.sequences.empty()) requests_.erase(id);
  }
  for (const auto& [id, reason] : grammar_failures) {
    updates.push_back({.id = id, .finished = true, .error = reason});
    drop(id, &results);
  }
  // After the logits: a rejected prompt may have siblings in this step's chunks.
  for (const Rejection& rejected : plan.rejected) {
    updates.push_back({.id = rejected.request, .finished = true, .error = rejected.reason});
    drop(rejected.request, &results);
  }
  return updates;
}

void Engine::add_request_metrics(const RequestStarts& starts,
                                 std::vector<SequenceUpdate>& updates) {
  for (SequenceUpdate& update : updates) {
    if (const auto it = starts.find(update.id); it != starts.end()) {
      update.first_scheduled = it->second.first_scheduled;
      update.cached_prompt_tokens = it->second.cached_prompt_tokens;
    }
  }
}

}  // namespace baton
