#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "baton/llm_options.h"
#include "core/serving/engine/block_manager.h"
#include "core/serving/engine/sequence.h"
#include "core/serving/engine/step_plan.h"

namespace baton {

// Iteration-level scheduler: every step, running sequences first (oldest first), then waiting
// ones in the policy's order, under a token budget and a sequence cap. A long prompt is split
// into chunks that ride along with decodes. Under sjf with an overtake ratio, a much shorter
// waiting request first suspends the running one with the most predicted work left (which keeps
// its KV while it waits). When the pool runs dry, a suspended sequence's KV goes first, then a
// running sequence that no step in flight holds and this step has not yet given work is
// preempted (its blocks freed, recomputed later): under sjf the one with the most predicted work
// left, otherwise the most recently admitted; that may be the sequence that needs the room.
class Scheduler {
 public:
  // Seconds on a monotonic clock; tests pass a fake one.
  using Clock = std::function<double()>;
  // Reads max_batch_tokens, max_seqs, long_prefill_token_threshold, the scheduling policy, the
  // sjf_ options and kv_reservation. sjf_aging is counted in generated tokens rather than
  // seconds, so the credit means the same on a fast host as on a slow one: a long request passes
  // newer short ones once it has waited about (its work - theirs) / aging decode steps, and
  // sjf_max_wait_s is the hard bound that keeps it from starving.
  Scheduler(const LLMOptions& options, BlockManager& blocks, int32_t context_size,
            Clock clock = steady_seconds);
  static double steady_seconds();

  // The scheduler owns every sequence it is given and is the only one to change it: callers read
  // it by id and change it through the calls below. Error(kInternal) for a new sequence id that
  // is unset or taken (add, fork) and for an id it does not hold (fork's parent, remove,
  // set_predicted_output).
  //
  // Takes a new sequence, which waits to be scheduled.
  const Sequence& add(std::unique_ptr<Sequence> sequence);
  // A parallel sample or beam of `parent`, as sequence `child`: its tokens, progress and blocks
  // (shared, copied when written), its arrival and wait, placed where the parent is (running or
  // waiting).
  const Sequence& fork(SeqId parent, SeqId child);
  // Ends a sequence (finished or aborted): its blocks are freed and it is gone.
  void remove(SeqId seq);
  // The output length the sequence is now predicted to reach (sjf's order, reservation).
  void set_predicted_output(SeqId seq, double tokens);
  // A busy request's sequences are neither scheduled nor preempted.
  StepPlan schedule(const StepLimits& limits = {});
  // A step of `plan` ran and its logits were sampled, in this order: each scheduled sequence
  // advances past its chunk and the blocks it filled join the prefix cache; the predictions are
  // set; the forks are made (copies of their parents before this step's tokens); the tokens are
  // appended; the finished sequences are removed. Error(kInternal) when the results name a
  // sequence that is gone or grow one past the context.
  void update_from_output(const StepPlan& plan, const StepResults& results = {});
  // The sequence a plan names; null once it is removed.
  const Sequence* sequence(SeqId seq) const;
  // The same, for a plan not yet collected, whose sequences are all still here: throws
  // Error(kInternal) when one is gone.
  const Sequence& planned(SeqId seq) const;

  bool empty() const { return running_.empty() && waiting_.empty(); }
  size_t running_count() const { return running_.size(); }
  size_t waiting_count() const { return waiting_.size(); }
  int64_t preemption_count() const { return preemptions_; }
  // Running sequences sent back to wait with their KV kept, for a shorter request.
  int64_t suspension_count() const { return suspensions_; }
  // Tokens whose K/V a preemption dropped and that were computed again (less what the prefix
  // cache gave back).
  int64_t recomputed_tokens() const { return recomputed_tokens_; }
  // While predictions rank requests poorly, sjf orders and preempts as fcfs does and predicted
  // reservation sets nothing aside (the engine decides from its PredictionLog).
  void trust_predictions(bool trusted) { predictions_trusted_ = trusted; }
  bool predictions_trusted() const { return predictions_trusted_; }
  // The waiting sequences in the order they would be admitted now.
  std::vector<const Sequence*> waiting_order();

 private:
  bool schedule_running(Sequence* sequence, const StepLimits& limits, int32_t& budget,
                        StepPlan& plan);
  Sequence* choose_victim(Sequence* needing, const StepLimits& limits) const;
  void preempt(Sequence* sequence, StepPlan& plan);
  // Frees a sequence's blocks, to be recomputed, and counts the preemption.
  void drop_kv(Sequence* sequence, StepPlan& plan);
  // Suspends running sequences for much shorter waiting ones (LLMOptions::sjf_overtake).
  void overtake(const StepLimits& limits, StepPlan& plan);
  // The running sequence overtaking may suspend: the most sjf work left among those it may.
  Sequence* most_work_left(const StepLimits& limits, double now) const;
  // Blocks that only the suspended sequences at or after waiting position `first` hold.
  int32_t suspended_blocks(size_t first, const StepLimits& limits) const;
  // Frees the KV of the suspended sequence latest in the waiting order at or after position
  // `first` (which no step in flight holds), as a preemption; false when there is none.
  bool drop_suspended(size_t first, const StepLimits& limits, StepPlan& plan);
  void admit_waiting(const StepLimits& limits, int32_t& budget, StepPlan& plan);
  bool copy_on_write(Sequence* sequence, StepPlan& plan);
  void insert_waiting(Sequence* sequence);
  void order_waiting();
  bool uses_predictions() const;
  // sjf's hard bound: waited sjf_max_wait_s since arrival.
  bool waited_past_bound(const Sequence& s, double now) const;
  // sjf's score: the predicted work left less the aging credit (for a running sequence, what it
  // waited before it was admitted).
  double sjf_score(const Sequence& s) const;
  // The tokens admission sets aside room for (KvReservation), and the blocks that room still
  // lacks for the running sequences together.
  int32_t reserved_length(const Sequence& sequence) const;
  int32_t outstanding_reservation() const;
  // The blocks a sequence lacks to hold `tokens` tokens and its reservation; the reservation
  // alone, when one is kept (0 when it holds it all).
  int32_t blocks_lacking(const Sequence& sequence, int32_t tokens) const;
  int32_t reservation_left(const Sequence& sequence) const;

  // Takes a sequence under its id, which must be set and not taken.
  Sequence* own(std::unique_ptr<Sequence> sequence);
  Sequence& owned(SeqId seq) const;
  // A busy request's sequences are neither scheduled nor preempted.
  static bool busy(const StepLimits& limits, const Sequence* s) {
    return limits.busy.contains(s->id);
  }

  LLMOptions options_;
  BlockManager& blocks_;
  std::unordered_map<SeqId, std::unique_ptr<Sequence>> sequences_;
  int32_t context_size_;
  Clock clock_;
  std::vector<Sequence*> running_;  // admission order
  std::vector<Sequence*> waiting_;  // the policy's order (sjf: sorted again every step)
  // The tokens a running sequence has generated, on average, since the scheduler began: the
  // clock sjf's aging runs on. Each plan adds its sampled chunks over the running sequences, so
  // that micro-batches in flight (each holding a share of them) add their share.
  double generation_clock_ = 0;
  int64_t preemptions_ = 0;
  int64_t suspensions_ = 0;
  int64_t recomputed_tokens_ = 0;
  bool predictions_trusted_ = true;
};

}  // namespace baton
