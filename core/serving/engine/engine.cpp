#include "core/serving/engine/engine.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "baton/error.h"
#include "core/serving/engine/step_runner.h"
#include "core/serving/sampling/logprobs.h"
#include "models/lora/lora_adapter.h"

namespace baton {

namespace {

constexpr int32_t kMaxLogprobs = 20;

// A sequence can never hold more tokens than the whole pool.
EngineConfig clamp_context(EngineConfig config) {
  config.context_size =
      std::min(config.context_size, config.n_blocks * config.options.kv_block_size);
  return config;
}

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

KvCacheShape kv_cache_shape(const Model& model, const EngineConfig& config) {
  const ModelConfig& c = model.config();
  return KvCacheShape{.n_layers = model.shard().layer_count(c.n_layer),
                      .n_kv_heads = c.n_head_kv,
                      .head_dim = c.head_dim,
                      .block_size = config.options.kv_block_size,
                      .n_blocks = config.n_blocks,
                      .dtype = kv_cache_dtype(config.options.kv_cache_dtype)};
}

int32_t reported_completions(const GenerationParams& params) {
  if (params.use_beam_search) return params.n;
  return params.best_of > 0 ? params.best_of : params.n;
}

Engine::Engine(const Model& model, Backend& backend, const Tokenizer& tokenizer,
               const EngineConfig& config)
    : model_(model),
      tokenizer_(tokenizer),
      config_(clamp_context(config)),
      cache_(kv_cache_shape(model, config), backend),
      runner_(model, backend, cache_, config.replica),
      blocks_(config.n_blocks, config.options.kv_block_size, config.options.prefix_caching),
      scheduler_(config.options, blocks_, config_.context_size) {
  const LLMOptions& options = config.options;
  if (config.lora_slots > 0) {
    if (model.shard().tp_size > 1 || config.replica) {
      throw Error(ErrorCategory::kUnsupported,
                  "LoRA adapters are not supported with tensor or pipeline parallelism yet");
    }
    lora_ = std::make_unique<LoraResidency>(
        std::make_unique<LoraSlots>(backend, model.config(), config.lora_slots,
                                    options.max_lora_rank, lora_dtype(options.lora_dtype)),
        model.config(), options.max_cpu_loras);
  }
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
  if (prompt.empty()) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the prompt is empty and the model adds no BOS token to start from");
  }
  check_params(params);
  if (priority != 0 && config_.options.scheduling_policy != SchedulingPolicy::kPriority) {
    throw Error(ErrorCategory::kInvalidArgument,
                "request priority " + std::to_string(priority) +
                    " needs the priority scheduling policy (scheduling_policy priority)");
  }
  for (int32_t id : prompt) {
    if (id < 0 || id >= model_.config().n_vocab) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "prompt token " + std::to_string(id) + " is outside the vocabulary");
    }
  }
  auto request = std::make_unique<Request>();
  request->params = params;
  if (!params.lora.empty()) {
    request->lora = lora_ ? lora_->find(params.lora) : nullptr;
    if (!request->lora) {
      throw Error(ErrorCategory::kInvalidArgument, "no LoRA adapter named '" + params.lora + "'" +
                                                       (lora_ ? "" : ": this engine serves none"));
    }
  }
  auto s = std::make_unique<Sequence>();
  s->id = next_id_++;
  s->arrival = s->id;
  s->priority = priority;
  s->prompt_length = static_cast<int32_t>(prompt.size());
  request->length_features = {.prefix_keys = prefix_keys(prompt, config_.options.kv_block_size),
                              .max_tokens = params.max_tokens,
                              .has_stop = !params.stop.empty() || !params.stop_token_ids.empty(),
                              .expected_tokens = params.expected_tokens};
  const LengthPrediction prediction = predictor_.predict(request->length_features);
  request->predicted_output = request->arrival_prediction = prediction.tokens;
  request->cold_prediction = prediction.confidence == 0;
  s->predicted_output = request->predicted_output;
  s->max_output = std::max(0, std::min(params.max_tokens, config_.context_size - s->prompt_length));
  s->tokens = std::move(prompt);
  s->sampler = std::make_unique<Sampler>(params.sampling, grammar_constraint(params));
  const uint64_t id = s->id;
  // Before counting the prompt: an adapter whose slot cannot be loaded throws here.
  if (!request->lora || pin_adapter(*request, *s, true)) {
    scheduler_.add(s.get());
  } else {
    parked_.push_back(id);
  }
  counters_.prompt_tokens += s->prompt_length;
  request->sequences.push_back(std::move(s));
  requests_.emplace(id, std::move(request));
  return id;
}

std::unique_ptr<GrammarConstraint> Engine::grammar_constraint(const GenerationParams& params) {
  if (params.grammar.empty()) return nullptr;
  const SharedGrammar shared = grammars_.get(params.grammar);
  if (!token_pieces_) token_pieces_ = TokenPieces::of(tokenizer_);
  auto constraint = std::make_unique<GrammarConstraint>(shared, token_pieces_, !params.ignore_eos,
                                                        params.stop_token_ids);
  if (constraint->finished() && params.ignore_eos) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the grammar matches only the empty text, and ignore_eos leaves no way to end");
  }
  return constraint;
}

bool Engine::pin_adapter(Request& request, Sequence& first, bool arriving) {
  std::optional<LoraResidency::Pin> pin = lora_->acquire(request.lora, arriving);
  if (!pin) return false;
  first.lora_slot = pin->slot();
  first.adapter = pin->id();
  request.lora_pin = std::move(*pin);
  return true;
}

void Engine::admit_parked() {
  for (auto it = parked_.begin(); it != parked_.end();) {
    const auto found = requests_.find(*it);
    if (found == requests_.end()) {
      it = parked_.erase(it);
      continue;
    }
    try {
      if (!pin_adapter(*found->second, *found->second->sequences.front(), false)) {
        ++it;
        continue;
      }
      scheduler_.add(found->second->sequences.front().get());
    } catch (const std::exception& e) {
      failed_admissions_.push_back({.id = *it, .finished = true, .error = e.what()});
      requests_.erase(found);
    }
    it = parked_.erase(it);
  }
}

void Engine::wait_for_parked() const {
  // Long enough not to spin, short enough that a request arriving meanwhile barely waits.
  constexpr std::chrono::milliseconds kWait(5);
  if (lora_) lora_->wait_for_reading(kWait);
}

void Engine::add_lora(std::shared_ptr<const LoraAdapter> adapter) {
  if (!lora_) {
    throw Error(ErrorCategory::kInvalidArgument,
                "this engine has no LoRA slots: set a maximum of adapters (max_loras)");
  }
  lora_->add(std::move(adapter));
}

void Engine::remove_lora(const std::string& name) {
  if (!lora_) throw Error(ErrorCategory::kInvalidArgument, "no LoRA adapter named '" + name + "'");
  lora_->remove(name);
}

Sequence& Engine::fork(Request& request, Sequence& parent, int32_t sample) {
  auto child = std::make_unique<Sequence>();
  child->id = parent.id;
  child->sample = sample;
  child->priority = parent.priority;
  child->arrival = parent.arrival;
  child->predicted_output = parent.predicted_output;
  child->max_output = parent.max_output;
  child->tokens = parent.tokens;
  child->prompt_length = parent.prompt_length;
  child->computed = parent.computed;
  child->cached_prompt_tokens = parent.cached_prompt_tokens;
  child->prefix_looked_up = parent.prefix_looked_up;
  child->adapter = parent.adapter;
  child->lora_slot = parent.lora_slot;
  child->blocks = blocks_.share(parent.blocks);
  child->sampler = parent.sampler->fork(sample_seed(request.params.sampling.seed, sample));
  child->cumulative_logprob = parent.cumulative_logprob;
  scheduler_.fork(parent, child.get());
  request.sequences.push_back(std::move(child));
  return *request.sequences.back();
}

void Engine::remove_sequence(Request& request, Sequence* sequence) {
  scheduler_.remove(sequence);
  request.beam_candidates.erase(sequence);
  std::erase_if(request.sequences, [&](const auto& s) { return s.get() == sequence; });
}

void Engine::drop(uint64_t id) {
  const auto it = requests_.find(id);
  if (it == requests_.end()) return;
  for (const auto& s : it->second->sequences) scheduler_.remove(s.get());
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
      learn_length(request, s->generated());  // a stop string ended it
      remove_sequence(request, s.get());
      break;
    }
  }
  if (request.sequences.empty()) requests_.erase(it);
}

bool Engine::is_stop_token(const Request& request, int32_t token) const {
  const auto& stop_ids = request.params.stop_token_ids;
  return (!request.params.ignore_eos && tokenizer_.is_end_of_generation(token)) ||
         std::find(stop_ids.begin(), stop_ids.end(), token) != stop_ids.end();
}

std::optional<FinishReason> Engine::ends_after(const Request& request, const Sequence& s) const {
  if (is_stop_token(request, s.tokens.back()) || s.sampler->grammar_finished()) {
    return FinishReason::kStop;
  }
  if (s.generated() >= request.params.max_tokens ||
      static_cast<int32_t>(s.tokens.size()) >= config_.context_size) {
    return FinishReason::kLength;
  }
  return std::nullopt;
}

void Engine::sample_tokens(Request& request, Sequence& s, std::span<const float> logits,
                           std::vector<SequenceUpdate>& updates) {
  std::vector<Sequence*> group = {&s};
  if (!request.forked) {
    predict_after_prefill(request, s, logits);
    // The prompt is computed once; the other samples start from its blocks and its logits.
    request.forked = true;
    for (int32_t i = 1; i < reported_completions(request.params); ++i) {
      group.push_back(&fork(request, s, i));
    }
  }
  const LogSoftmax logprob(logits);
  for (Sequence* sequence : group) {
    const double grammar_before = sequence->sampler->grammar_seconds();
    const int32_t token = sequence->sampler->sample(logits, sequence->tokens,
                                                    static_cast<size_t>(sequence->prompt_length));
    count_grammar_seconds(sequence->sampler->grammar_seconds() - grammar_before);
    sequence->tokens.push_back(token);
    sequence->cumulative_logprob += logprob(token);
    ++counters_.generated_tokens;
    SequenceUpdate update{.id = sequence->id,
                          .sample = sequence->sample,
                          .new_tokens = {token},
                          .cumulative_logprob = sequence->cumulative_logprob};
    if (request.params.logprobs > 0) {
      update.logprobs.push_back(
          {.chosen = {token, logprob(token)}, .top = logprob.top(request.params.logprobs)});
    }
    if (const std::optional<FinishReason> reason = ends_after(request, *sequence)) {
      update.finished = true;
      update.finish_reason = *reason;
      update.last_token_is_text = *reason == FinishReason::kStop && !is_stop_token(request, token);
      learn_length(request, sequence->generated());
      remove_sequence(request, sequence);
    }
    updates.push_back(std::move(update));
  }
}

std::vector<SequenceUpdate> Engine::step() {
  try {
    fill_pipeline();
    std::vector<SequenceUpdate> updates = std::exchange(failed_admissions_, {});
    if (in_flight_.empty()) {
      if (updates.empty() && !parked_.empty()) wait_for_parked();
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

std::set<uint64_t> Engine::plan_requests(const StepPlan& plan) {
  std::set<uint64_t> ids;
  for (const ScheduledChunk& chunk : plan.chunks) ids.insert(chunk.sequence->id);
  for (const Sequence* s : plan.preempted) ids.insert(s->id);
  for (const auto& [s, reason] : plan.rejected) ids.insert(s->id);
  return ids;
}

size_t Engine::pipeline_depth() const {
  if (runner_.depth() == 1) return 1;
  return static_cast<size_t>(config_.options.parallel.pp_micro_batches > 0
                                 ? config_.options.parallel.pp_micro_batches
                                 : runner_.depth());
}

void Engine::fill_pipeline() {
  if (!parked_.empty()) admit_parked();
  if (std::exchange(learned_since_prediction_, false)) refresh_cold_predictions();
  const size_t depth = pipeline_depth();
  while (in_flight_.size() < depth) {
    // Micro-batches of equal size keep the stages in step: each takes a share of the token
    // budget. Decodes are not spread over micro-batches: a step reads every weight of its stage
    // however few tokens it carries, so decodes split in two would read them twice per token.
    limits_.max_tokens =
        std::max<int32_t>(1, config_.options.max_batch_tokens / static_cast<int32_t>(depth));
    StepPlan plan = scheduler_.schedule(limits_);
    if (plan.chunks.empty() && plan.preempted.empty() && plan.rejected.empty()) return;
    const StepInput batch = build_batch(plan);
    launch(plan, batch);
    for (uint64_t id : plan_requests(plan)) limits_.busy.insert(id);
    in_flight_.push_back({.plan = std::move(plan), .launched = !batch.tokens.empty()});
  }
}

std::vector<SequenceUpdate> Engine::collect_oldest() {
  InFlight step = std::move(in_flight_.front());
  in_flight_.pop_front();
  const std::vector<float> logits = step.launched ? runner_.collect() : std::vector<float>();
  for (uint64_t id : plan_requests(step.plan)) limits_.busy.erase(id);
  const RequestStarts starts = record_progress(step.plan);
  std::vector<SequenceUpdate> updates = consume_logits(step.plan, logits);
  apply_deferred_aborts(updates);
  add_request_metrics(starts, updates);
  return updates;
}

StepInput Engine::build_batch(const StepPlan& plan) const {
  auto layout = std::make_shared<PagedBatch>();
  layout->block_size = config_.options.kv_block_size;
  StepInput input;
  auto lora = std::make_shared<StepInput::Lora>();
  bool adapted = false;
  for (size_t c = 0; c < plan.chunks.size(); ++c) {
    const ScheduledChunk& chunk = plan.chunks[c];
    const Sequence& s = *chunk.sequence;
    layout->block_tables.push_back(s.blocks.blocks);
    adapted = adapted || s.lora_slot >= 0;
    for (int32_t i = chunk.first; i < chunk.first + chunk.count; ++i) {
      input.tokens.push_back(s.tokens[i]);
      layout->token_seq.push_back(static_cast<int32_t>(c));
      layout->token_pos.push_back(i);
      lora->token_slots.push_back(s.lora_slot);
    }
    if (chunk.needs_logits)
      input.logit_rows.push_back(static_cast<int32_t>(input.tokens.size()) - 1);
  }
  input.layout = std::move(layout);
  input.context_size = config_.context_size;
  if (adapted) {
    lora->slots = &lora_->slots();
    input.lora = std::move(lora);
  }
  return input;
}

void Engine::launch(const StepPlan& plan, const StepInput& batch) {
  // A step whose chunks all stop short of their prompt's end needs no logits, but it must still
  // run: its tokens' K/V are what the next chunk attends to.
  if (!batch.tokens.empty()) {
    std::vector<Sampler*> constrained;
    for (const ScheduledChunk& chunk : plan.chunks) {
      Sampler* sampler = chunk.sequence->sampler.get();
      if (config_.grammar_masks_beside_step && chunk.needs_logits && sampler->has_grammar()) {
        constrained.push_back(sampler);
      }
    }
    MaskPreparer::Step masks = masks_.start(std::move(constrained));
    runner_.launch(plan.block_copies, batch);
    const MaskPreparer::Seconds seconds = masks.finish();
    counters_.grammar_seconds += seconds.work;
    counters_.grammar_engine_seconds += seconds.waited;
  }
  if (!plan.chunks.empty()) ++counters_.steps;
  counters_.computed_tokens += static_cast<int64_t>(batch.tokens.size());
}

// Before the logits are handled: that may fork or end sequences of the same request.
Engine::RequestStarts Engine::record_progress(const StepPlan& plan) {
  for (const Sequence* preempted : plan.preempted) {
    // A recomputed beam reports its candidates again when its logits come back.
    requests_.at(preempted->id)->beam_candidates.erase(preempted);
  }
  RequestStarts starts;
  for (const ScheduledChunk& chunk : plan.chunks) {
    Sequence& s = *chunk.sequence;
    Request& request = *requests_.at(s.id);
    if (request.first_scheduled == std::chrono::steady_clock::time_point{}) {
      request.first_scheduled = std::chrono::steady_clock::now();
      request.cached_prompt_tokens = s.cached_prompt_tokens;
    }
    starts.emplace(s.id, RequestStart{request.first_scheduled, request.cached_prompt_tokens});
    s.computed += chunk.count;
    blocks_.cache_full_blocks(s.tokens, s.computed, s.adapter, s.blocks);
  }
  return starts;
}

std::vector<SequenceUpdate> Engine::consume_logits(const StepPlan& plan,
                                                   std::span<const float> logits) {
  // The logit rows, in the order of the chunks that asked for them.
  std::vector<Sequence*> with_logits;
  for (const ScheduledChunk& chunk : plan.chunks) {
    if (chunk.needs_logits) with_logits.push_back(chunk.sequence);
  }
  std::vector<SequenceUpdate> updates;
  // Requests whose grammar failed in this step, dropped after it: siblings may follow.
  std::map<uint64_t, std::string> grammar_failures;
  const size_t n_vocab = static_cast<size_t>(model_.config().n_vocab);
  for (size_t row = 0; row < with_logits.size(); ++row) {
    Sequence& s = *with_logits[row];
    const uint64_t id = s.id;
    if (grammar_failures.contains(id)) continue;
    Request& request = *requests_.at(id);
    if (request.params.max_tokens == 0) {
      for (int32_t i = 0; i < reported_completions(request.params); ++i) {
        updates.push_back({.id = id, .sample = i, .finished = true});
      }
      drop(id);
      continue;
    }
    const std::span<const float> row_logits = logits.subspan(n_vocab * row, n_vocab);
    try {
      if (request.params.use_beam_search) {
        advance_beams(request, s, row_logits, updates);
      } else {
        sample_tokens(request, s, row_logits, updates);
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
    drop(id);
  }
  // After the logits: a rejected prompt may have siblings in this step's chunks.
  for (const auto& [sequence, reason] : plan.rejected) {
    updates.push_back({.id = sequence->id, .finished = true, .error = reason});
    drop(sequence->id);
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

void Engine::ScoredPredictions::add(double predicted, int32_t generated) {
  log.add(predicted, generated);
  if (log.size() < kTrustWindow || log.total() % kTrustEvery == 0) {
    tau = log.kendall_tau();
    error = log.mean_absolute_error();
  }
}

void Engine::learn_length(const Request& request, int32_t generated) {
  predictor_.observe(request.length_features, generated);
  arrival_predictions_.add(request.arrival_prediction, generated);
  if (request.head_predicted) head_predictions_.add(request.predicted_output, generated);
  learned_since_prediction_ = true;
  if (arrival_predictions_.log.trust_due()) {
    scheduler_.trust_predictions(arrival_predictions_.tau >= kMinTrustedTau);
  }
}

void Engine::predict_after_prefill(Request& request, Sequence& s, std::span<const float> logits) {
  // A head reads the base model's state; an adapter's logits are another model's.
  if (!config_.length_head || request.length_features.expected_tokens > 0 || request.lora) return;
  request.predicted_output = config_.length_head->predict(logits, request.length_features);
  request.head_predicted = true;
  s.predicted_output = request.predicted_output;
}

void Engine::refresh_cold_predictions() {
  // Requests that arrived before anything was learned hold max_tokens as their prediction and
  // would queue behind every later one under sjf; they are predicted again while they wait.
  for (auto& [id, request] : requests_) {
    if (!request->cold_prediction || request->sequences.empty()) continue;
    Sequence& first = *request->sequences.front();
    if (first.status != SequenceStatus::kWaiting || first.generated() > 0) continue;
    const LengthPrediction prediction = predictor_.predict(request->length_features);
    request->predicted_output = request->arrival_prediction = prediction.tokens;
    request->cold_prediction = prediction.confidence == 0;
    first.predicted_output = prediction.tokens;
  }
}

EngineStats Engine::stats() const {
  EngineStats s = counters_;
  s.preemptions = scheduler_.preemption_count();
  s.recomputed_tokens = scheduler_.recomputed_tokens();
  s.suspensions = scheduler_.suspension_count();
  s.length_predictions = static_cast<int64_t>(arrival_predictions_.log.total());
  s.length_prediction_error = arrival_predictions_.error;
  s.length_prediction_tau = arrival_predictions_.tau;
  s.length_head_predictions = static_cast<int64_t>(head_predictions_.log.total());
  s.length_head_error = head_predictions_.error;
  s.length_head_tau = head_predictions_.tau;
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
  s.waiting = static_cast<int32_t>(scheduler_.waiting_count() + parked_.size());
  return s;
}

}  // namespace baton
