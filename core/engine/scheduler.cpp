#include "core/engine/scheduler.h"

#include <algorithm>

#include "baton/error.h"

namespace baton {

Scheduler::Scheduler(const SchedulerConfig& config, BlockManager& blocks, int32_t context_size)
    : config_(config), blocks_(blocks), context_size_(context_size) {
  if (config.max_batch_tokens <= 0 || config.max_seqs <= 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "max batch tokens and max sequences must be positive, got " +
                    std::to_string(config.max_batch_tokens) + " and " +
                    std::to_string(config.max_seqs));
  }
}

void Scheduler::insert_waiting(Sequence* sequence) {
  sequence->status = SequenceStatus::kWaiting;
  const auto before = [](const Sequence* a, const Sequence* b) {
    return a->priority != b->priority ? a->priority > b->priority : a->arrival < b->arrival;
  };
  waiting_.insert(std::upper_bound(waiting_.begin(), waiting_.end(), sequence, before), sequence);
}

void Scheduler::add(Sequence* sequence) {
  insert_waiting(sequence);
}

void Scheduler::fork(const Sequence& parent, Sequence* child) {
  if (parent.status == SequenceStatus::kRunning) {
    child->status = SequenceStatus::kRunning;
    running_.push_back(child);
  } else {
    insert_waiting(child);
  }
}

void Scheduler::remove(Sequence* sequence) {
  std::erase(running_, sequence);
  std::erase(waiting_, sequence);
  blocks_.release(sequence->blocks);
  sequence->status = SequenceStatus::kFinished;
}

void Scheduler::preempt(Sequence* sequence, StepPlan& plan) {
  std::erase(running_, sequence);
  blocks_.release(sequence->blocks);
  sequence->computed = 0;
  sequence->prefix_looked_up = false;
  insert_waiting(sequence);
  plan.preempted.push_back(sequence);
  ++preemptions_;
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
  const int32_t count = std::min(sequence->pending(), budget);
  if (count <= 0) return true;
  while (!blocks_.grow(sequence->blocks, sequence->computed + count) ||
         !copy_on_write(sequence, plan)) {
    // The most recently admitted sequence that no step in flight uses; `sequence` at the latest.
    Sequence* victim = *std::find_if(running_.rbegin(), running_.rend(),
                                     [&](const Sequence* s) { return !limits.busy_request(s); });
    preempt(victim, plan);
    if (victim == sequence) return false;
  }
  plan.chunks.push_back(
      {sequence, sequence->computed, count,
       sequence->computed + count == static_cast<int32_t>(sequence->tokens.size())});
  budget -= count;
  return true;
}

void Scheduler::admit_waiting(const StepLimits& limits, int32_t& budget, StepPlan& plan) {
  for (size_t next = 0; next < waiting_.size() && budget > 0 &&
                        running_.size() < static_cast<size_t>(config_.max_seqs);) {
    Sequence* sequence = waiting_[next];
    if (limits.busy_request(sequence)) {
      ++next;
      continue;
    }
    const auto at = waiting_.begin() + static_cast<ptrdiff_t>(next);
    const int32_t length = static_cast<int32_t>(sequence->tokens.size());
    if (length >= context_size_ || blocks_.blocks_for(length + 1) > blocks_.total_blocks()) {
      waiting_.erase(at);
      plan.rejected.emplace_back(
          sequence, "the prompt has " + std::to_string(length) + " tokens; the context holds " +
                        std::to_string(std::min(context_size_,
                                                blocks_.total_blocks() * blocks_.block_size())));
      continue;
    }
    if (!sequence->prefix_looked_up) {
      // At least the last token is always computed: its logits start the generation.
      sequence->computed =
          blocks_.reuse_prefix(sequence->tokens, length - 1, sequence->adapter, sequence->blocks);
      if (sequence->generated() == 0) sequence->cached_prompt_tokens = sequence->computed;
      sequence->prefix_looked_up = true;
    }
    const int32_t count = std::min(sequence->pending(), budget);
    if (!blocks_.grow(sequence->blocks, sequence->computed + count)) {
      // Not enough room yet: give back what the lookup took, and wait for running work to end.
      blocks_.release(sequence->blocks);
      sequence->computed = 0;
      sequence->prefix_looked_up = false;
      return;
    }
    waiting_.erase(at);
    sequence->status = SequenceStatus::kRunning;
    running_.push_back(sequence);
    plan.chunks.push_back(
        {sequence, sequence->computed, count, sequence->computed + count == length});
    budget -= count;
  }
}

StepPlan Scheduler::schedule(const StepLimits& limits) {
  StepPlan plan;
  int32_t budget = std::min(config_.max_batch_tokens, limits.max_tokens);
  const std::vector<Sequence*> running = running_;
  for (Sequence* sequence : running) {
    // Preempted this step, or in a step in flight.
    if (sequence->status != SequenceStatus::kRunning || limits.busy_request(sequence)) continue;
    schedule_running(sequence, limits, budget, plan);
  }
  // Admitting new work right after a preemption would only evict it again.
  if (plan.preempted.empty()) admit_waiting(limits, budget, plan);
  return plan;
}

}  // namespace baton
