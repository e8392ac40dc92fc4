#include "core/engine/engine.h"

#include <algorithm>

#include "baton/error.h"
#include "core/engine/step_runner.h"

namespace baton {

namespace {

// A sequence can never hold more tokens than the whole pool.
EngineConfig clamp_context(EngineConfig config) {
  config.context_size = std::min(config.context_size, config.n_blocks * config.block_size);
  return config;
}

}  // namespace

Engine::Engine(const Model& model, Backend& backend, const Tokenizer& tokenizer,
               const EngineConfig& config)
    : model_(model),
      backend_(backend),
      tokenizer_(tokenizer),
      config_(clamp_context(config)),
      cache_(KvCacheShape{.n_layers = model.config().n_layer,
                          .n_kv_heads = model.config().n_head_kv,
                          .head_dim = model.config().head_dim,
                          .block_size = config.block_size,
                          .n_blocks = config.n_blocks},
             backend),
      blocks_(config.n_blocks, config.block_size, config.prefix_caching),
      scheduler_(config.scheduler, blocks_, config_.context_size) {}

Engine::~Engine() = default;

uint64_t Engine::add(std::vector<int32_t> prompt, const GenerationParams& params,
                     int32_t priority) {
  if (prompt.empty()) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the prompt is empty and the model adds no BOS token to start from");
  }
  if (params.max_tokens < 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "max_tokens must not be negative, got " + std::to_string(params.max_tokens));
  }
  for (int32_t id : prompt) {
    if (id < 0 || id >= model_.config().n_vocab) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "prompt token " + std::to_string(id) + " is outside the vocabulary");
    }
  }
  auto request = std::make_unique<Request>();
  request->params = params;
  Sequence& s = request->sequence;
  s.id = next_id_++;
  s.arrival = s.id;
  s.priority = priority;
  s.prompt_length = static_cast<int32_t>(prompt.size());
  s.tokens = std::move(prompt);
  s.sampler = std::make_unique<Sampler>(params.sampling);
  scheduler_.add(&s);
  const uint64_t id = s.id;
  requests_.emplace(id, std::move(request));
  return id;
}

void Engine::abort(uint64_t id) {
  const auto it = requests_.find(id);
  if (it == requests_.end()) return;
  scheduler_.remove(&it->second->sequence);
  requests_.erase(it);
}

void Engine::finish(Request& request, FinishReason reason, SequenceUpdate& update) {
  update.finished = true;
  update.finish_reason = reason;
  scheduler_.remove(&request.sequence);
}

std::vector<SequenceUpdate> Engine::step() {
  StepPlan plan = scheduler_.schedule();
  std::vector<SequenceUpdate> updates;
  for (const auto& [sequence, reason] : plan.rejected) {
    SequenceUpdate update{.id = sequence->id, .finished = true, .error = reason};
    scheduler_.remove(sequence);
    requests_.erase(sequence->id);
    updates.push_back(std::move(update));
  }
  if (plan.chunks.empty()) return updates;
  for (const auto& [source, destination] : plan.block_copies) {
    cache_.copy_block(source, destination, backend_);
  }

  auto layout = std::make_shared<PagedBatch>();
  layout->block_size = config_.block_size;
  StepInput input;
  for (size_t c = 0; c < plan.chunks.size(); ++c) {
    const ScheduledChunk& chunk = plan.chunks[c];
    const Sequence& s = *chunk.sequence;
    layout->block_tables.push_back(s.blocks.blocks);
    for (int32_t i = chunk.first; i < chunk.first + chunk.count; ++i) {
      input.tokens.push_back(s.tokens[i]);
      layout->token_seq.push_back(static_cast<int32_t>(c));
      layout->token_pos.push_back(i);
    }
    if (chunk.needs_logits)
      input.logit_rows.push_back(static_cast<int32_t>(input.tokens.size()) - 1);
  }
  input.layout = std::move(layout);
  const std::vector<float> logits =
      input.logit_rows.empty() ? std::vector<float>() : run_step(model_, backend_, cache_, input);
  ++counters_.steps;
  counters_.computed_tokens += static_cast<int64_t>(input.tokens.size());

  const size_t n_vocab = static_cast<size_t>(model_.config().n_vocab);
  size_t logit_row = 0;
  for (const ScheduledChunk& chunk : plan.chunks) {
    Sequence& s = *chunk.sequence;
    s.computed += chunk.count;
    blocks_.cache_full_blocks(s.tokens, s.computed, s.adapter, s.blocks);
    if (!chunk.needs_logits) continue;
    Request& request = *requests_.at(s.id);
    if (request.params.max_tokens == 0) {
      SequenceUpdate update{.id = s.id};
      finish(request, FinishReason::kLength, update);
      requests_.erase(s.id);
      updates.push_back(std::move(update));
      ++logit_row;
      continue;
    }
    const std::span<const float> row(logits.data() + n_vocab * logit_row++, n_vocab);
    const int32_t token = s.sampler->sample(row, s.tokens, s.prompt_length);
    s.tokens.push_back(token);
    ++counters_.generated_tokens;
    SequenceUpdate update{.id = s.id, .new_tokens = {token}};
    const auto& stop_ids = request.params.stop_token_ids;
    if ((!request.params.ignore_eos && tokenizer_.is_end_of_generation(token)) ||
        std::find(stop_ids.begin(), stop_ids.end(), token) != stop_ids.end()) {
      finish(request, FinishReason::kStop, update);
    } else if (s.generated() >= request.params.max_tokens ||
               static_cast<int32_t>(s.tokens.size()) >= config_.context_size) {
      finish(request, FinishReason::kLength, update);
    }
    if (update.finished) requests_.erase(s.id);
    updates.push_back(std::move(update));
  }
  return updates;
}

EngineCounters Engine::counters() const {
  EngineCounters c = counters_;
  c.preemptions = scheduler_.preemption_count();
  c.prefix_query_tokens = blocks_.prefix_query_tokens();
  c.prefix_hit_tokens = blocks_.prefix_hit_tokens();
  return c;
}

}  // namespace baton
