#include "core/serving/engine/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <tuple>

#include "baton/error.h"
#include "core/runtime/option_ranges.h"

namespace baton {
namespace {

// kv_reservation predicted sets aside the prediction and this fraction of it again.
constexpr double kReservationMargin = 0.25;

// The output a sequence is expected to generate in all: its prediction, else its limit.
double expected_output(const Sequence& s) {
  return s.predicted_output > 0 ? s.predicted_output : s.max_output;
}

// Predicted output tokens still to come; at least one, as a running sequence has one more step.
double predicted_left(const Sequence& s) {
  return std::max(expected_output(s) - s.generated(), 1.0);
}

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

bool Scheduler::waited_past_bound(const Sequence& s, double now) const {
  return now - s.arrival_time >= options_.sjf_max_wait_s;
}

double Scheduler::sjf_score(const Sequence& s) const {
  const double waiting_now =
      s.status == SequenceStatus::kWaiting ? generation_clock_ - s.waiting_since : 0.0;
  return predicted_left(s) - options_.sjf_aging * (s.waited_before + waiting_now);
}

bool Scheduler::uses_predictions() const {
  return options_.scheduling_policy == SchedulingPolicy::kSjf && predictions_trusted_;
}

void Scheduler::insert_waiting(Sequence* sequence) {
  sequence->status = SequenceStatus::kWaiting;
  sequence->waiting_since = generation_clock_;
  const bool by_priority = options_.scheduling_policy == SchedulingPolicy::kPriority;
  const auto before = [by_priority](const Sequence* a, const Sequence* b) {
    if (by_priority && a->priority != b->priority) return a->priority > b->priority;
    return a->arrival < b->arrival;
  };
  waiting_.insert(std::upper_bound(waiting_.begin(), waiting_.end(), sequence, before), sequence);
}

void Scheduler::order_waiting() {
  if (options_.scheduling_policy != SchedulingPolicy::kSjf)
    return;  // kept in order as they are inserted
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
    return std::tuple(!starved, starved ? s->arrival_time : sjf_score(*s), s->arrival);
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

void Scheduler::drop_kv(Sequence* sequence, StepPlan& plan) {
  blocks_.release(sequence->blocks);
  sequence->preempted_computed = sequence->computed;
  sequence->computed = 0;
  sequence->prefix_looked_up = false;
  sequence->suspended = false;
  plan.preempted.push_back(sequence);
  ++preemptions_;
}

void Scheduler::preempt(Sequence* sequence, StepPlan& plan) {
  std::erase(running_, sequence);
  drop_kv(sequence, plan);
  insert_waiting(sequence);
}

int32_t Scheduler::suspended_blocks(size_t first, const StepLimits& limits) const {
  int32_t blocks = 0;
  for (size_t i = first; i < waiting_.size(); ++i) {
    const Sequence& s = *waiting_[i];
    if (!s.suspended || limits.busy_request(&s)) continue;
    blocks += static_cast<int32_t>(std::ranges::count_if(
        s.blocks.blocks, [&](int32_t block) { return blocks_.ref_count(block) == 1; }));
  }
  return blocks;
}

bool Scheduler::drop_suspended(size_t first, const StepLimits& limits, StepPlan& plan) {
  if (options_.sjf_overtake <= 0) return false;  // nothing is ever suspended
  for (size_t i = waiting_.size(); i-- > first;) {
    Sequence* s = waiting_[i];
    if (!s->suspended || limits.busy_request(s)) continue;
    drop_kv(s, plan);
    return true;
  }
  return false;
}

Sequence* Scheduler::most_work_left(const StepLimits& limits, double now) const {
  // Not one that waited past max_wait_s (the bound), nor one with nothing to compute (a beam
  // waiting for its siblings), nor one of several sequences of a request: those step together,
  // and a sibling left running would hold its slot waiting for the suspended one.
  const auto alone = [&](const Sequence* s) {
    return std::ranges::count(running_, s->id, &Sequence::id) == 1;
  };
  Sequence* longest = nullptr;
  for (Sequence* s : running_) {
    if (limits.busy_request(s) || s->pending() == 0 || waited_past_bound(*s, now) || !alone(s))
      continue;
    if (!longest || sjf_score(*s) > sjf_score(*longest)) longest = s;
  }
  return longest;
}

void Scheduler::overtake(const StepLimits& limits, StepPlan& plan) {
  if (!uses_predictions() || options_.sjf_overtake <= 0 || waiting_.empty()) return;
  const double now = clock_();
  auto free_slots = static_cast<int64_t>(options_.max_seqs) - static_cast<int64_t>(running_.size());
  int32_t room = blocks_.available_blocks() - outstanding_reservation();
  // Scores of a token or less count alike, so that requests aged past their own work do not take
  // turns at each other's slots; one past the bound overtakes as the shortest.
  const auto overtaking_score = [&](const Sequence& s) {
    return waited_past_bound(s, now) ? 1.0 : std::max(sjf_score(s), 1.0);
  };
  const std::vector<Sequence*> order = waiting_;
  for (Sequence* waiting : order) {
    if (limits.busy_request(waiting)) continue;
    // Only while the predicted output of those let in fits beside what runs, with what admission
    // sets aside for them: when the pool runs dry a suspended sequence's KV goes first, and it
    // would then be recomputed.
    const double expected =
        static_cast<double>(waiting->tokens.size()) + std::ceil(predicted_left(*waiting));
    room -=
        blocks_lacking(*waiting, static_cast<int32_t>(std::min<double>(expected, context_size_)));
    if (free_slots > 0) {
      --free_slots;
      if (room < 0) return;
      continue;
    }
    // Forks can fill more than the slots; a suspension then frees none.
    if (free_slots < 0) return;
    Sequence* longest = most_work_left(limits, now);
    if (!longest ||
        overtaking_score(*waiting) * options_.sjf_overtake > overtaking_score(*longest)) {
      return;
    }
    room += reservation_left(*longest);
    if (room < 0) return;
    std::erase(running_, longest);
    longest->suspended = true;
    insert_waiting(longest);
    plan.suspended.push_back(longest);
    ++suspensions_;
  }
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
      {sequence, sequence->computed, count,
       sequence->computed + count == static_cast<int32_t>(sequence->tokens.size())});
  budget -= count;
  return true;
}

void Scheduler::admit_waiting(const StepLimits& limits, int32_t& budget, StepPlan& plan) {
  for (size_t next = 0; next < waiting_.size() && budget > 0 &&
                        running_.size() < static_cast<size_t>(options_.max_seqs);) {
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
    plan.chunks.push_back(
        {sequence, sequence->computed, count, sequence->computed + count == length});
    budget -= count;
  }
}

int32_t Scheduler::reserved_length(const Sequence& s) const {
  const int32_t now = static_cast<int32_t>(s.tokens.size());
  int32_t length = now;
  if (options_.kv_reservation == KvReservation::kMax) {
    length = s.prompt_length + s.max_output;
  } else if (options_.kv_reservation == KvReservation::kPredicted && predictions_trusted_) {
    // In double, and never past max_tokens: a cold prediction is max_tokens itself.
    const double output = std::min(std::ceil(expected_output(s) * (1.0 + kReservationMargin)),
                                   static_cast<double>(s.max_output));
    length = s.prompt_length + static_cast<int32_t>(output);
  }
  // Past its prediction a sequence grows on demand, with nothing set aside.
  return std::min(std::max(length, now), context_size_);
}

int32_t Scheduler::blocks_lacking(const Sequence& s, int32_t tokens) const {
  return blocks_.blocks_for(std::max(reserved_length(s), tokens)) -
         static_cast<int32_t>(s.blocks.blocks.size());
}

int32_t Scheduler::reservation_left(const Sequence& s) const {
  if (options_.kv_reservation == KvReservation::kNone) return 0;
  return std::max(0, blocks_lacking(s, 0));
}

int32_t Scheduler::outstanding_reservation() const {
  if (options_.kv_reservation == KvReservation::kNone) return 0;
  int32_t blocks = 0;
  for (const Sequence* s : running_) blocks += reservation_left(*s);
  return blocks;
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
