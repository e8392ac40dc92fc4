#include "core/serving/engine/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <tuple>

#include "baton/error.h"
#include "core/runtime/option_ranges.h"

namespace baton {
namespace {

// The tokens a sequence computes this step: what it has pending, within the step's budget and
// the per-request cap on a prompt's chunk.
int32_t chunk_tokens(const Sequence& s, int32_t budget, const LLMOptions& options) {
  const int32_t cap = options.long_prefill_token_threshold;
  return std::min({s.pending(), budget, cap > 0 ? cap : budget});
}

}  // namespace

double Scheduler::steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Scheduler::Scheduler(const LLMOptions& options, BlockManager& blocks, int32_t context_size,
                     Clock clock)
    : options_(options), blocks_(blocks), context_size_(context_size), clock_(std::move(clock)) {
  check_option_ranges(options);
  // Infinite aging would score a request that has not yet waited inf * 0, NaN, which no sort
  // can order.
  if (!std::isfinite(options.sjf_aging)) {
    throw Error(ErrorCategory::kInvalidArgument,
                "sjf_aging must be finite, got " + std::to_string(options.sjf_aging));
  }
  // At a ratio of 1 or less, two requests of equal work would take each other's slot every step.
  if (options.sjf_overtake != 0 &&
      !(options.sjf_overtake > 1 && std::isfinite(options.sjf_overtake))) {
    throw Error(ErrorCategory::kInvalidArgument,
                "sjf_overtake must be 0 (off) or a finite ratio above 1, got " +
                    std::to_string(options.sjf_overtake));
  }
}

std::set<uint64_t> StepPlan::requests() const {
  std::set<uint64_t> ids;
  for (const ScheduledChunk& chunk : chunks) ids.insert(chunk.request);
  for (const SequenceRef& s : preempted) ids.insert(s.request);
  for (const Rejection& r : rejected) ids.insert(r.request);
  return ids;
}

const Sequence& Scheduler::add(std::unique_ptr<Sequence> sequence) {
  Sequence* s = own(std::move(sequence));
  if (s->arrival_time < 0) s->arrival_time = clock_();
  insert_waiting(s);
  return *s;
}

const Sequence& Scheduler::fork(SeqId parent_seq, SeqId child_seq) {
  const Sequence& parent = owned(parent_seq);
  auto copy = std::make_unique<Sequence>();
  copy->id = parent.id;
  copy->seq = child_seq;
  copy->priority = parent.priority;
  copy->arrival = parent.arrival;
  copy->predicted_output = parent.predicted_output;
  copy->max_output = parent.max_output;
  copy->tokens = parent.tokens;
  copy->prompt_length = parent.prompt_length;
  copy->computed = parent.computed;
  copy->cached_prompt_tokens = parent.cached_prompt_tokens;
  copy->prefix_looked_up = parent.prefix_looked_up;
  copy->adapter = parent.adapter;
  copy->lora_slot = parent.lora_slot;
  copy->blocks = blocks_.share(parent.blocks);
  Sequence* child = own(std::move(copy));
  if (parent.status == SequenceStatus::kRunning) {
    child->status = SequenceStatus::kRunning;
    running_.push_back(child);
  } else {
    insert_waiting(child);
  }
  // A sample or beam has waited as long as its parent.
  child->arrival_time = parent.arrival_time;
  child->waiting_since = parent.waiting_since;
  child->waited_before = parent.waited_before;
  return *child;
}

void Scheduler::remove(SeqId seq) {
  Sequence* sequence = &owned(seq);
  std::erase(running_, sequence);
  std::erase(waiting_, sequence);
  blocks_.release(sequence->blocks);
  sequences_.erase(seq);
}

void Scheduler::set_predicted_output(SeqId seq, double tokens) {
  owned(seq).predicted_output = tokens;
}

void Scheduler::drop_kv(Sequence* sequence, StepPlan& plan) {
  blocks_.release(sequence->blocks);
  sequence->preempted_computed = sequence->computed;
  sequence->computed = 0;
  sequence->prefix_looked_up = false;
  sequence->suspended = false;
  plan.preempted.push_back({sequence->seq, sequence->id});
  ++preemptions_;
}

void Scheduler::preempt(Sequence* sequence, StepPlan& plan) {
  std::erase(running_, sequence);
  drop_kv(sequence, plan);
  insert_waiting(sequence);
}

bool Scheduler::copy_on_write(Sequence* sequence, StepPlan& plan) {
  // Writing continues inside the last, partial block; if another sequence (a forked sample or
  // beam) shares it, this sequence gets a private copy first. Returns false when that copy needs
  // a block the pool does not have.
  if (sequence->computed % blocks_.block_size() == 0) return true;
  const size_t index = static_cast<size_t>(sequence->computed / blocks_.block_size());
  if (blocks_.ref_count(sequence->blocks.blocks[index]) > 1 && blocks_.available_blocks() == 0)
    return false;
  if (auto copy = blocks_.make_writable(sequence->blocks, index))
    plan.block_copies.push_back(*copy);
  return true;
}

bool Scheduler::schedule_running(Sequence* sequence, const StepLimits& limits, int32_t& budget,
                                 StepPlan& plan) {
  const int32_t count = chunk_tokens(*sequence, budget, options_);
  if (count <= 0) return true;
  while (!blocks_.grow(sequence->blocks, sequence->computed + count) ||
         !copy_on_write(sequence, plan)) {
    // A suspended sequence's KV first: it is waiting anyway.
    if (drop_suspended(0, limits, plan)) continue;
    // A running sequence that no step in flight uses; `sequence` itself at the latest.
    Sequence* victim = choose_victim(sequence, limits);
    preempt(victim, plan);
    if (victim == sequence) return false;
  }
  plan.chunks.push_back(
      {sequence->seq, sequence->id, sequence->computed, count,
       sequence->computed + count == static_cast<int32_t>(sequence->tokens.size())});
  budget -= count;
  return true;
}

void Scheduler::admit_waiting(const StepLimits& limits, int32_t& budget, StepPlan& plan) {
  for (size_t next = 0; next < waiting_.size() && budget > 0 &&
                        running_.size() < static_cast<size_t>(options_.max_seqs);) {
    Sequence* sequence = waiting_[next];
    if (busy(limits, sequence)) {
      ++next;
      continue;
    }
    const auto at = waiting_.begin() + static_cast<ptrdiff_t>(next);
    const int32_t length = static_cast<int32_t>(sequence->tokens.size());
    if (length >= context_size_ || blocks_.blocks_for(length + 1) > blocks_.total_blocks()) {
      waiting_.erase(at);
      plan.rejected.push_back(
          {sequence->seq, sequence->id,
           "the prompt has " + std::to_string(length) + " tokens; the context holds " +
               std::to_string(
                   std::min(context_size_, blocks_.total_blocks() * blocks_.block_size()))});
      continue;
    }
    if (!sequence->prefix_looked_up) {
      // At least the last token is always computed: its logits start the generation.
      sequence->computed =
          blocks_.reuse_prefix(sequence->tokens, length - 1, sequence->adapter, sequence->blocks);
      if (sequence->generated() == 0) sequence->cached_prompt_tokens = sequence->computed;
      sequence->prefix_looked_up = true;
    }
    const int32_t count = chunk_tokens(*sequence, budget, options_);
    // The room set aside for the running sequences' expected growth is not free for this one,
    // unless nothing runs (a request whose reservation exceeds the pool still runs alone).
    const int32_t needed = blocks_lacking(*sequence, sequence->computed + count);
    const int32_t unreserved = blocks_.available_blocks() - outstanding_reservation();
    const bool reserved = running_.empty() || unreserved >= needed;
    if (!reserved || !blocks_.grow(sequence->blocks, sequence->computed + count)) {
      // The KV of suspended sequences further back in the order is the room to take first: with
      // nothing running, always (nothing else will free any); otherwise when it is enough.
      if ((running_.empty() || suspended_blocks(next + 1, limits) >= needed - unreserved) &&
          drop_suspended(next + 1, limits, plan)) {
        continue;
      }
      // Not enough room yet: give back what the lookup took, and wait for running work to end.
      // A suspended sequence waits holding its KV, which is what lets it resume for nothing.
      if (!sequence->suspended) {
        blocks_.release(sequence->blocks);
        sequence->computed = 0;
        sequence->prefix_looked_up = false;
      }
      return;
    }
    waiting_.erase(at);
    sequence->suspended = false;
    sequence->waited_before += generation_clock_ - sequence->waiting_since;
    recomputed_tokens_ += std::max(0, sequence->preempted_computed - sequence->computed);
    sequence->preempted_computed = 0;
    sequence->status = SequenceStatus::kRunning;
    running_.push_back(sequence);
    plan.chunks.push_back({sequence->seq, sequence->id, sequence->computed, count,
                           sequence->computed + count == length});
    budget -= count;
  }
}

const Sequence* Scheduler::sequence(SeqId seq) const {
  const auto it = sequences_.find(seq);
  return it == sequences_.end() ? nullptr : it->second.get();
}

Sequence* Scheduler::own(std::unique_ptr<Sequence> sequence) {
  const SeqId seq = sequence->seq;
  if (seq == 0 || sequences_.contains(seq)) {
    throw Error(ErrorCategory::kInternal,
                "sequence id " + std::to_string(seq) + " is unset or already taken");
  }
  return sequences_.emplace(seq, std::move(sequence)).first->second.get();
}

Sequence& Scheduler::owned(SeqId seq) const {
  const auto it = sequences_.find(seq);
  if (it == sequences_.end()) {
    throw Error(ErrorCategory::kInternal, "sequence " + std::to_string(seq) + " is gone");
  }
  return *it->second;
}

const Sequence& Scheduler::planned(SeqId seq) const {
  const auto it = sequences_.find(seq);
  if (it == sequences_.end()) {
    throw Error(ErrorCategory::kInternal,
                "a plan names sequence " + std::to_string(seq) + ", which is gone");
  }
  return *it->second;
}

void Scheduler::update_from_output(const StepPlan& plan, const StepResults& results) {
  // Progress first: a fork copies its parent's progress and cached block hashes.
  for (const ScheduledChunk& chunk : plan.chunks) {
    Sequence& s = owned(chunk.seq);
    s.computed += chunk.count;
    blocks_.cache_full_blocks(s.tokens, s.computed, s.adapter, s.blocks);
  }
  for (const StepResults::Prediction& p : results.predictions)
    set_predicted_output(p.seq, p.tokens);
  for (const StepResults::Fork& f : results.forks) fork(f.parent, f.child);
  for (const StepResults::Token& t : results.tokens) {
    Sequence& s = owned(t.seq);
    if (static_cast<int32_t>(s.tokens.size()) >= context_size_) {
      throw Error(ErrorCategory::kInternal, "sequence " + std::to_string(t.seq) +
                                                " would grow past the context of " +
                                                std::to_string(context_size_));
    }
    s.tokens.push_back(t.token);
  }
  for (SeqId seq : results.finished) remove(seq);
}

StepPlan Scheduler::schedule(const StepLimits& limits) {
  StepPlan plan;
  order_waiting();
  overtake(limits, plan);
  if (!plan.suspended.empty()) order_waiting();
  int32_t budget = std::min(options_.max_batch_tokens, limits.max_tokens);
  const std::vector<Sequence*> running = running_;
  for (Sequence* sequence : running) {
    // Preempted this step, or in a step in flight.
    if (sequence->status != SequenceStatus::kRunning || busy(limits, sequence)) continue;
    schedule_running(sequence, limits, budget, plan);
  }
  // Admitting new work right after a preemption would only evict it again.
  if (plan.preempted.empty()) admit_waiting(limits, budget, plan);
  if (!running_.empty()) {
    const auto sampled =
        std::ranges::count_if(plan.chunks, [](const ScheduledChunk& c) { return c.needs_logits; });
    generation_clock_ += static_cast<double>(sampled) / static_cast<double>(running_.size());
  }
  return plan;
}

}  // namespace baton
