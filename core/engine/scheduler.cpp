#include "core/engine/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <tuple>

#include "baton/error.h"

namespace baton {
namespace {

// The output a sequence is expected to generate in all: its prediction, else its limit.
double expected_output(const Sequence& s) {
  return s.predicted_output > 0 ? s.predicted_output : s.max_output;
}

// Predicted output tokens still to come; at least one, as a running sequence has one more step.
double predicted_left(const Sequence& s) {
  return std::max(expected_output(s) - s.generated(), 1.0);
}

}  // namespace

SchedulingPolicy parse_scheduling_policy(const std::string& name) {
  if (name == "fcfs") return SchedulingPolicy::kFcfs;
  if (name == "priority") return SchedulingPolicy::kPriority;
  if (name == "sjf") return SchedulingPolicy::kSjf;
  throw Error(ErrorCategory::kInvalidArgument,
              "unknown scheduling policy '" + name + "' (use fcfs, priority or sjf)");
}

KvReservation parse_kv_reservation(const std::string& name) {
  if (name == "none") return KvReservation::kNone;
  if (name == "predicted") return KvReservation::kPredicted;
  if (name == "max") return KvReservation::kMax;
  throw Error(ErrorCategory::kInvalidArgument,
              "unknown KV reservation '" + name + "' (use none, predicted or max)");
}

double Scheduler::steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Scheduler::Scheduler(const SchedulerConfig& config, BlockManager& blocks, int32_t context_size,
                     Clock clock)
    : config_(config), blocks_(blocks), context_size_(context_size), clock_(std::move(clock)) {
  if (config.max_batch_tokens <= 0 || config.max_seqs <= 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "max batch tokens and max sequences must be positive, got " +
                    std::to_string(config.max_batch_tokens) + " and " +
                    std::to_string(config.max_seqs));
  }
  if (!(config.max_wait_s > 0)) {
    throw Error(ErrorCategory::kInvalidArgument,
                "--sjf-max-wait must be positive, got " + std::to_string(config.max_wait_s));
  }
  // Infinite aging would score a request that has not yet waited inf * 0, NaN, which no sort
  // can order.
  if (!std::isfinite(config.aging) || config.aging < 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "--sjf-aging must be finite and not negative, got " + std::to_string(config.aging));
  }
  if (!(config.reservation_margin >= 0)) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the reservation margin must not be negative, got " +
                    std::to_string(config.reservation_margin));
  }
}

bool Scheduler::waited_past_bound(const Sequence& s, double now) const {
  return now - s.arrival_time >= config_.max_wait_s;
}

bool Scheduler::uses_predictions() const {
  return config_.policy == SchedulingPolicy::kSjf && predictions_trusted_;
}

void Scheduler::insert_waiting(Sequence* sequence) {
  sequence->status = SequenceStatus::kWaiting;
  sequence->waiting_since = generation_clock_;
  const bool by_priority = config_.policy == SchedulingPolicy::kPriority;
  const auto before = [by_priority](const Sequence* a, const Sequence* b) {
    if (by_priority && a->priority != b->priority) return a->priority > b->priority;
    return a->arrival < b->arrival;
  };
  waiting_.insert(std::upper_bound(waiting_.begin(), waiting_.end(), sequence, before), sequence);
}

void Scheduler::order_waiting() {
  if (config_.policy != SchedulingPolicy::kSjf) return;  // kept in order as they are inserted
  if (!predictions_trusted_) {
    // Back to arrival order, which insert_waiting keeps from here on.
    std::stable_sort(waiting_.begin(), waiting_.end(),
                     [](const Sequence* a, const Sequence* b) { return a->arrival < b->arrival; });
    return;
  }
  const double now = clock_();
  // Those that waited max_wait_s first, oldest first; then the least predicted work left, less
  // the aging credit of the tokens generated while they waited. The time a preempted request
  // ran is not waiting: its own tokens already shrank its work left.
  const auto key = [&](const Sequence* s) {
    const bool starved = waited_past_bound(*s, now);
    const double waited = s->waited_before + generation_clock_ - s->waiting_since;
    return std::tuple(!starved,
                      starved ? s->arrival_time : predicted_left(*s) - config_.aging * waited,
                      s->arrival);
  };
  std::stable_sort(waiting_.begin(), waiting_.end(),
                   [&](const Sequence* a, const Sequence* b) { return key(a) < key(b); });
}

std::vector<const Sequence*> Scheduler::waiting_order() {
  order_waiting();
  return {waiting_.begin(), waiting_.end()};
}

void Scheduler::add(Sequence* sequence) {
  if (sequence->arrival_time < 0) sequence->arrival_time = clock_();
  insert_waiting(sequence);
}

void Scheduler::fork(const Sequence& parent, Sequence* child) {
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
}

void Scheduler::remove(Sequence* sequence) {
  std::erase(running_, sequence);
  std::erase(waiting_, sequence);
  blocks_.release(sequence->blocks);
  sequence->status = SequenceStatus::kFinished;
}

Sequence* Scheduler::choose_victim(Sequence* needing, const StepLimits& limits) const {
  // Running sequences are scheduled oldest first, so those older than `needing` already have
  // their chunks in this step's plan and are not candidates: `needing` and the newer ones are.
  // Under sjf, not one that waited past max_wait_s either (sent back, the bound would mean
  // nothing), and such a one that needs the room is sent back only when no other can go.
  // Scanned newest first, so that equal predictions give up the most recent.
  const double now = uses_predictions() ? clock_() : 0.0;
  Sequence* victim = nullptr;
  for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
    Sequence* s = *it;
    if (s == needing) break;
    if (s->status != SequenceStatus::kRunning || limits.busy_request(s)) continue;
    if (!uses_predictions()) return s;
    if (waited_past_bound(*s, now)) continue;
    if (!victim || predicted_left(*s) > predicted_left(*victim)) victim = s;
  }
  if (!victim) return needing;
  if (waited_past_bound(*needing, now)) return victim;
  return predicted_left(*needing) > predicted_left(*victim) ? needing : victim;
}

void Scheduler::preempt(Sequence* sequence, StepPlan& plan) {
  std::erase(running_, sequence);
  blocks_.release(sequence->blocks);
  sequence->preempted_computed = sequence->computed;
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
    // A running sequence that no step in flight uses; `sequence` itself at the latest.
    Sequence* victim = choose_victim(sequence, limits);
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
    // The room set aside for the running sequences' expected growth is not free for this one,
    // unless nothing runs (a request whose reservation exceeds the pool still runs alone).
    const int32_t needed =
        blocks_.blocks_for(std::max(reserved_length(*sequence), sequence->computed + count)) -
        static_cast<int32_t>(sequence->blocks.blocks.size());
    const bool reserved =
        running_.empty() || blocks_.available_blocks() - outstanding_reservation() >= needed;
    if (!reserved || !blocks_.grow(sequence->blocks, sequence->computed + count)) {
      // Not enough room yet: give back what the lookup took, and wait for running work to end.
      blocks_.release(sequence->blocks);
      sequence->computed = 0;
      sequence->prefix_looked_up = false;
      return;
    }
    waiting_.erase(at);
    sequence->waited_before += generation_clock_ - sequence->waiting_since;
    recomputed_tokens_ += std::max(0, sequence->preempted_computed - sequence->computed);
    sequence->preempted_computed = 0;
    sequence->status = SequenceStatus::kRunning;
    running_.push_back(sequence);
    plan.chunks.push_back(
        {sequence, sequence->computed, count, sequence->computed + count == length});
    budget -= count;
  }
}

int32_t Scheduler::reserved_length(const Sequence& s) const {
  const int32_t now = static_cast<int32_t>(s.tokens.size());
  int32_t length = now;
  if (config_.reservation == KvReservation::kMax) {
    length = s.prompt_length + s.max_output;
  } else if (config_.reservation == KvReservation::kPredicted && predictions_trusted_) {
    // In double, and never past max_tokens: a cold prediction is max_tokens itself.
    const double output =
        std::min(std::ceil(expected_output(s) * (1.0 + config_.reservation_margin)),
                 static_cast<double>(s.max_output));
    length = s.prompt_length + static_cast<int32_t>(output);
  }
  // Past its prediction a sequence grows on demand, with nothing set aside.
  return std::min(std::max(length, now), context_size_);
}

int32_t Scheduler::outstanding_reservation() const {
  if (config_.reservation == KvReservation::kNone) return 0;
  int32_t blocks = 0;
  for (const Sequence* s : running_) {
    blocks += std::max(
        0, blocks_.blocks_for(reserved_length(*s)) - static_cast<int32_t>(s->blocks.blocks.size()));
  }
  return blocks;
}

StepPlan Scheduler::schedule(const StepLimits& limits) {
  StepPlan plan;
  order_waiting();
  int32_t budget = std::min(config_.max_batch_tokens, limits.max_tokens);
  const std::vector<Sequence*> running = running_;
  for (Sequence* sequence : running) {
    // Preempted this step, or in a step in flight.
    if (sequence->status != SequenceStatus::kRunning || limits.busy_request(sequence)) continue;
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
