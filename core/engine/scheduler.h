#pragma once

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/block_manager.h"
#include "core/engine/sequence.h"

namespace baton {

struct SchedulerConfig {
  int32_t max_batch_tokens = 2048;  // tokens computed per step, prefill chunks and decodes
  int32_t max_seqs = 64;            // sequences per step
};

// One step's work for one sequence: tokens [first, first + count) of its token list.
struct ScheduledChunk {
  Sequence* sequence;
  int32_t first;
  int32_t count;
  bool needs_logits;  // the chunk reaches the sequence's last token: sample after it
};

// What the scheduler decided for a step: a plain record the executor runs.
struct StepPlan {
  std::vector<ScheduledChunk> chunks;
  std::vector<std::pair<int32_t, int32_t>> block_copies;    // copy-on-write (source, destination)
  std::vector<Sequence*> preempted;                         // lost their blocks; will recompute
  std::vector<std::pair<Sequence*, std::string>> rejected;  // can never fit; with the reason
};

// With micro-batches in flight (pipeline parallelism), what one step may not take: the requests
// with a sequence in a step not yet collected, and more than `max_tokens` tokens (within the
// scheduler's own budget).
struct StepLimits {
  std::set<uint64_t> busy;
  int32_t max_tokens = std::numeric_limits<int32_t>::max();

  bool busy_request(const Sequence* s) const { return busy.contains(s->id); }
};

// Iteration-level scheduler: every step, running sequences first (oldest first), then waiting
// ones by priority and arrival, under a token budget and a sequence cap. A long prompt is split
// into chunks that ride along with decodes. When the pool runs dry, the most recently admitted
// running sequence that no step in flight holds is preempted (its blocks freed, recomputed
// later); that may be the sequence that needs the room.
class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, BlockManager& blocks, int32_t context_size);

  void add(Sequence* sequence);
  // Adds a copy of `parent` (a parallel sample or beam) where the parent is: running or waiting.
  void fork(const Sequence& parent, Sequence* child);
  // Forgets a sequence (finished or aborted) and frees its blocks.
  void remove(Sequence* sequence);
  // A busy request's sequences are neither scheduled nor preempted.
  StepPlan schedule(const StepLimits& limits = {});

  bool empty() const { return running_.empty() && waiting_.empty(); }
  size_t running_count() const { return running_.size(); }
  size_t waiting_count() const { return waiting_.size(); }
  int64_t preemption_count() const { return preemptions_; }

 private:
  bool schedule_running(Sequence* sequence, const StepLimits& limits, int32_t& budget,
                        StepPlan& plan);
  void preempt(Sequence* sequence, StepPlan& plan);
  void admit_waiting(const StepLimits& limits, int32_t& budget, StepPlan& plan);
  bool copy_on_write(Sequence* sequence, StepPlan& plan);
  void insert_waiting(Sequence* sequence);

  SchedulerConfig config_;
  BlockManager& blocks_;
  int32_t context_size_;
  std::vector<Sequence*> running_;  // admission order
  std::vector<Sequence*> waiting_;  // priority, then arrival
  int64_t preemptions_ = 0;
};

}  // namespace baton
