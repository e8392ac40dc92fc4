// The scheduler's policies: the order waiting requests start in (fcfs, priority, sjf with aging),
// whom a full pool preempts, overtaking under sjf, and the KV memory admission reserves.

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/serving/engine/scheduler.h"

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

}  // namespace

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
    if (s->status != SequenceStatus::kRunning || busy(limits, s)) continue;
    if (!uses_predictions()) return s;
    if (waited_past_bound(*s, now)) continue;
    if (!victim || predicted_left(*s) > predicted_left(*victim)) victim = s;
  }
  if (!victim) return needing;
  if (waited_past_bound(*needing, now)) return victim;
  return predicted_left(*needing) > predicted_left(*victim) ? needing : victim;
}

int32_t Scheduler::suspended_blocks(size_t first, const StepLimits& limits) const {
  int32_t blocks = 0;
  for (size_t i = first; i < waiting_.size(); ++i) {
    const Sequence& s = *waiting_[i];
    if (!s.suspended || busy(limits, &s)) continue;
    blocks += static_cast<int32_t>(std::ranges::count_if(
        s.blocks.blocks, [&](int32_t block) { return blocks_.ref_count(block) == 1; }));
  }
  return blocks;
}

bool Scheduler::drop_suspended(size_t first, const StepLimits& limits, StepPlan& plan) {
  if (options_.sjf_overtake <= 0) return false;  // nothing is ever suspended
  for (size_t i = waiting_.size(); i-- > first;) {
    Sequence* s = waiting_[i];
    if (!s->suspended || busy(limits, s)) continue;
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
    if (busy(limits, s) || s->pending() == 0 || waited_past_bound(*s, now) || !alone(s)) continue;
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
    if (busy(limits, waiting)) continue;
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
    plan.suspended.push_back({longest->seq, longest->id});
    ++suspensions_;
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

}  // namespace baton
