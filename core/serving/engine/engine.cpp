#include "core/serving/engine/engine.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "baton/error.h"
#include "core/serving/engine/request_checks.h"
#include "core/serving/engine/step_input.h"
#include "core/serving/engine/step_runner.h"
#include "core/serving/engine/stop_check.h"
#include "core/serving/sampling/logprobs.h"
#include "models/lora/lora_adapter.h"

namespace baton {

namespace {

// A sequence can never hold more tokens than the whole pool.
EngineConfig clamp_context(EngineConfig config) {
  config.context_size =
      std::min(config.context_size, config.n_blocks * config.options.kv_block_size);
  return config;
}

}  // namespace

KvCacheShape kv_cache_shape(const Model& model, const EngineConfig& config) {
  const ModelConfig& c = model.config();
  return KvCacheShape{.n_layers = model.shard().layer_count(c.n_layer),
                      .n_kv_heads = c.n_head_kv,
                      .head_dim = c.head_dim,
                      .block_size = config.options.kv_block_size,
                      .n_blocks = config.n_blocks,
                      .dtype = kv_cache_dtype(config.options.kv_cache_dtype)};
}

Engine::Engine(const Model& model, Backend& backend, const Tokenizer& tokenizer,
               const EngineConfig& config)
    : model_(model),
      tokenizer_(tokenizer),
      config_(clamp_context(config)),
      cache_(kv_cache_shape(model, config), backend),
      runner_(model, backend, cache_, config.replica),
      blocks_(config.n_blocks, config.options.kv_block_size, config.options.prefix_caching),
      scheduler_(config.options, blocks_, config_.context_size),
      lora_(backend, model, config.options, config.lora_slots, config.replica != nullptr),
      lengths_(config.length_head),
      grammar_(tokenizer, config.grammar_masks_beside_step) {
  const LLMOptions& options = config.options;
  // Read one at a time, so that no more than max_cpu_loras + 1 are in host memory at once.
  for (const LoraOptions& adapter : options.lora) {
    add_lora(read_lora_adapter(adapter, model.config()));
  }
  // A short prompt through the model from position 0, in blocks no sequence holds yet (every
  // sequence writes a position's K/V before reading it). Backends that prepare a weight or a
  // kernel at its first use (the CPU backend's Q4_0/Q8_0 panels, oneDNN's GEMM for F16/BF16
  // weights, taken from a few rows of x) do it here, at load, rather than in the first request's
  // time to first token; a model the backend cannot run fails here too.
  constexpr int64_t kWarmUpTokens = 8;
  const int64_t capacity = int64_t{config.n_blocks} * options.kv_block_size;
  const std::vector<int32_t> tokens(static_cast<size_t>(std::min(kWarmUpTokens, capacity)), 0);
  SoloSequence(runner_, config.context_size)
      .step(tokens, {static_cast<int32_t>(tokens.size()) - 1});
}

Engine::~Engine() = default;

uint64_t Engine::add(std::vector<int32_t> prompt, const GenerationParams& params,
                     int32_t priority) {
  check_request(prompt, params, priority, config_.options, model_.config().n_vocab);
  auto request = std::make_unique<Request>();
  request->params = params;
  if (!params.lora.empty()) {
    request->lora = lora_.find(params.lora);
  }
  auto s = std::make_unique<Sequence>();
  s->id = next_id_++;
  s->seq = next_seq_++;
  s->arrival = s->id;
  s->priority = priority;
  s->prompt_length = static_cast<int32_t>(prompt.size());
  request->length =
      lengths_.arrive({.prefix_keys = prefix_keys(prompt, config_.options.kv_block_size),
                       .max_tokens = params.max_tokens,
                       .has_stop = !params.stop.empty() || !params.stop_token_ids.empty(),
                       .expected_tokens = params.expected_tokens});
  s->predicted_output = request->length.predicted_output;
  s->max_output = std::max(0, std::min(params.max_tokens, config_.context_size - s->prompt_length));
  s->tokens = std::move(prompt);
  request->sequences.push_back(std::make_unique<SamplingState>(SamplingState{
      .seq = s->seq,
      .sampler = std::make_unique<Sampler>(params.sampling, grammar_.compile(params))}));
  const uint64_t id = s->id;
  const int32_t prompt_length = s->prompt_length;
  // Before counting the prompt: an adapter whose slot cannot be loaded throws here.
  if (!request->lora || pin_adapter(*request, *s, true)) {
    scheduler_.add(std::move(s));
  } else {
    request->parked = std::move(s);
    lora_.park(id);
  }
  counters_.prompt_tokens += prompt_length;
  requests_.emplace(id, std::move(request));
  return id;
}

bool Engine::pin_adapter(Request& request, Sequence& first, bool arriving) {
  std::optional<LoraResidency::Pin> pin = lora_.pin(request.lora, arriving);
  if (!pin) return false;
  first.lora_slot = pin->slot();
  first.adapter = pin->id();
  request.lora_pin = std::move(*pin);
  return true;
}

void Engine::admit_parked() {
  lora_.admit_parked([&](uint64_t id) {
    const auto found = requests_.find(id);
    if (found == requests_.end()) return true;
    try {
      Request& request = *found->second;
      if (!pin_adapter(request, *request.parked, false)) return false;
      scheduler_.add(std::move(request.parked));
    } catch (const std::exception& e) {
      failed_admissions_.push_back({.id = id, .finished = true, .error = e.what()});
      requests_.erase(found);
    }
    return true;
  });
}

void Engine::add_lora(std::shared_ptr<const LoraAdapter> adapter) {
  lora_.add(std::move(adapter));
}

void Engine::remove_lora(const std::string& name) {
  lora_.remove(name);
}

SamplingState& Engine::fork(Request& request, const SamplingState& parent, int32_t sample,
                            StepResults& results) {
  const SeqId child = next_seq_++;
  request.sequences.push_back(std::make_unique<SamplingState>(SamplingState{
      .seq = child,
      .sample = sample,
      .sampler = parent.sampler->fork(sample_seed(request.params.sampling.seed, sample)),
      .cumulative_logprob = parent.cumulative_logprob}));
  results.forks.push_back({parent.seq, child});
  return *request.sequences.back();
}

void Engine::remove_sequence(Request& request, SamplingState* sequence, StepResults* results) {
  if (request.parked) {
    request.parked.reset();
  } else if (results) {
    results->finished.push_back(sequence->seq);
  } else {
    scheduler_.remove(sequence->seq);
  }
  request.beams.forget(sequence->seq);
  std::erase_if(request.sequences, [&](const auto& s) { return s.get() == sequence; });
}

SamplingState& Engine::planned(const ScheduledChunk& chunk) const {
  if (const auto it = requests_.find(chunk.request); it != requests_.end()) {
    for (const auto& s : it->second->sequences) {
      if (s->seq == chunk.seq) return *s;
    }
  }
  throw Error(ErrorCategory::kInternal, "the plan names sequence " + std::to_string(chunk.seq) +
                                            " of request " + std::to_string(chunk.request) +
                                            ", which has ended");
}

const Sequence& Engine::state(const Request& request, const SamplingState& sequence) const {
  return request.parked ? *request.parked : scheduler_.planned(sequence.seq);
}

void Engine::drop(uint64_t id, StepResults* results) {
  const auto it = requests_.find(id);
  if (it == requests_.end()) return;
  if (!it->second->parked) {
    for (const auto& s : it->second->sequences) {
      if (results) {
        results->finished.push_back(s->seq);
      } else {
        scheduler_.remove(s->seq);
      }
    }
  }
  requests_.erase(it);
}

void Engine::abort(uint64_t id) {
  // A step in flight still computes the request's sequences, in blocks that must not go to
  // another sequence before it is collected.
  if (limits_.busy.contains(id)) {
    deferred_aborts_.insert(id);
    return;
  }
  drop(id);
}

void Engine::abort_sample(uint64_t id, int32_t sample) {
  const auto it = requests_.find(id);
  if (it == requests_.end()) return;
  if (limits_.busy.contains(id)) {
    deferred_sample_aborts_.emplace_back(id, sample);
    return;
  }
  Request& request = *it->second;
  if (request.params.use_beam_search) return drop(id);
  for (const auto& s : request.sequences) {
    if (s->sample == sample) {
      learn_length(request, state(request, *s).generated());  // a stop string ended it
      remove_sequence(request, s.get());
      break;
    }
  }
  if (request.sequences.empty()) requests_.erase(it);
}

std::vector<SequenceUpdate> Engine::step() {
  try {
    fill_pipeline();
    std::vector<SequenceUpdate> updates = std::exchange(failed_admissions_, {});
    if (in_flight_.empty()) {
      if (updates.empty() && lora_.has_parked()) lora_.wait_for_parked();
      return updates;
    }
    std::vector<SequenceUpdate> stepped = collect_oldest();
    updates.insert(updates.end(), std::make_move_iterator(stepped.begin()),
                   std::make_move_iterator(stepped.end()));
    return updates;
  } catch (...) {
    // The caller ends every request it holds, those that failed to be admitted too.
    failed_admissions_.clear();
    abandon_in_flight();
    throw;
  }
}

void Engine::abandon_in_flight() {
  // The runner delivers logits in launch order: the steps already launched are collected (and
  // dropped) so that the next step's logits are its own. A runner that failed has none to give.
  for (const InFlight& step : in_flight_) {
    if (!step.launched) continue;
    try {
      runner_.collect();
    } catch (...) {
      break;
    }
  }
  in_flight_.clear();
  limits_.busy.clear();
  std::vector<SequenceUpdate> none;
  apply_deferred_aborts(none);
}

size_t Engine::pipeline_depth() const {
  if (runner_.depth() == 1) return 1;
  return static_cast<size_t>(config_.options.parallel.pp_micro_batches > 0
                                 ? config_.options.parallel.pp_micro_batches
                                 : runner_.depth());
}

void Engine::fill_pipeline() {
  if (lora_.has_parked()) admit_parked();
  if (lengths_.take_learned()) refresh_cold_predictions();
  const size_t depth = pipeline_depth();
  while (in_flight_.size() < depth) {
    // Micro-batches of equal size keep the stages in step: each takes a share of the token
    // budget. Decodes are not spread over micro-batches: a step reads every weight of its stage
    // however few tokens it carries, so decodes split in two would read them twice per token.
    limits_.max_tokens =
        std::max<int32_t>(1, config_.options.max_batch_tokens / static_cast<int32_t>(depth));
    StepPlan plan = scheduler_.schedule(limits_);
    if (plan.empty()) return;
    const StepInput batch = build_step_input(plan, scheduler_, config_.options.kv_block_size,
                                             config_.context_size, lora_.slots());
    launch(plan, batch);
    for (uint64_t id : plan.requests()) limits_.busy.insert(id);
    in_flight_.push_back({.plan = std::move(plan), .launched = !batch.tokens.empty()});
  }
}

std::vector<SequenceUpdate> Engine::collect_oldest() {
  InFlight step = std::move(in_flight_.front());
  in_flight_.pop_front();
  const std::vector<float> logits = step.launched ? runner_.collect() : std::vector<float>();
  for (uint64_t id : step.plan.requests()) limits_.busy.erase(id);
  const RequestStarts starts = record_starts(step.plan);
  StepResults results;
  std::vector<SequenceUpdate> updates;
  try {
    updates = consume_logits(step.plan, logits, results);
  } catch (...) {
    // What the rows sampled before the failure stands, as each row's changes are its own; the
    // failure reported is the first one.
    try {
      scheduler_.update_from_output(step.plan, results);
    } catch (...) {
    }
    throw;
  }
  scheduler_.update_from_output(step.plan, results);
  apply_deferred_aborts(updates);
  add_request_metrics(starts, updates);
  return updates;
}

void Engine::launch(const StepPlan& plan, const StepInput& batch) {
  // A step whose chunks all stop short of their prompt's end needs no logits, but it must still
  // run: its tokens' K/V are what the next chunk attends to.
  if (!batch.tokens.empty()) {
    std::vector<Sampler*> sampling;
    for (const ScheduledChunk& chunk : plan.chunks) {
      if (chunk.needs_logits) sampling.push_back(planned(chunk).sampler.get());
    }
    grammar_.beside(sampling, [&] { runner_.launch(plan.block_copies, batch); });
  }
  if (!plan.chunks.empty()) ++counters_.steps;
  counters_.computed_tokens += static_cast<int64_t>(batch.tokens.size());
}

void Engine::apply_deferred_aborts(std::vector<SequenceUpdate>& updates) {
  for (auto it = deferred_aborts_.begin(); it != deferred_aborts_.end();) {
    const uint64_t id = *it;
    if (limits_.busy.contains(id)) {
      ++it;
      continue;
    }
    std::erase_if(updates, [&](const SequenceUpdate& u) { return u.id == id; });
    drop(id);
    it = deferred_aborts_.erase(it);
  }
  std::vector<std::pair<uint64_t, int32_t>> pending;
  pending.swap(deferred_sample_aborts_);
  for (const auto& [id, sample] : pending) {
    if (limits_.busy.contains(id)) {
      deferred_sample_aborts_.emplace_back(id, sample);
      continue;
    }
    std::erase_if(updates, [id = id, sample = sample](const SequenceUpdate& u) {
      return u.id == id && u.sample == sample;
    });
    abort_sample(id, sample);
  }
}

void Engine::learn_length(const Request& request, int32_t generated) {
  if (const std::optional<bool> trusted = lengths_.learn(request.length, generated)) {
    scheduler_.trust_predictions(*trusted);
  }
}

void Engine::refresh_cold_predictions() {
  // Requests that arrived before anything was learned hold max_tokens as their prediction and
  // would queue behind every later one under sjf; they are predicted again while they wait.
  for (auto& [id, request] : requests_) {
    if (request->sequences.empty()) continue;
    const Sequence& first = state(*request, *request->sequences.front());
    if (first.status != SequenceStatus::kWaiting || first.generated() > 0) continue;
    if (!lengths_.refresh(request->length)) continue;
    if (request->parked) {
      request->parked->predicted_output = request->length.predicted_output;
    } else {
      scheduler_.set_predicted_output(first.seq, request->length.predicted_output);
    }
  }
}

EngineStats Engine::stats() const {
  EngineStats s = counters_;
  s.preemptions = scheduler_.preemption_count();
  s.recomputed_tokens = scheduler_.recomputed_tokens();
  s.suspensions = scheduler_.suspension_count();
  lengths_.fill(s);
  grammar_.fill(s);
  s.length_predictions_trusted = scheduler_.predictions_trusted();
  s.prefix_query_tokens = blocks_.prefix_query_tokens();
  s.prefix_hit_tokens = blocks_.prefix_hit_tokens();
  s.prefix_cache_hit_rate =
      s.prefix_query_tokens > 0
          ? static_cast<double>(s.prefix_hit_tokens) / static_cast<double>(s.prefix_query_tokens)
          : 0.0;
  s.kv_blocks_total = blocks_.total_blocks();
  s.kv_blocks_free = blocks_.available_blocks();
  s.kv_blocks_used = s.kv_blocks_total - s.kv_blocks_free;
  s.running = static_cast<int32_t>(scheduler_.running_count());
  s.waiting = static_cast<int32_t>(scheduler_.waiting_count() + lora_.parked());
  return s;
}

}  // namespace baton
