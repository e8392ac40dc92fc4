#pragma once

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace baton {

// A sequence's own id, never reused: a request's parallel samples and beams each have one.
using SeqId = uint64_t;

// One step's work for one sequence: tokens [first, first + count) of its token list.
struct ScheduledChunk {
  SeqId seq;
  uint64_t request;
  int32_t first;
  int32_t count;
  bool needs_logits;  // the chunk reaches the sequence's last token: sample after it
};

// A sequence a plan names without work for it.
struct SequenceRef {
  SeqId seq;
  uint64_t request;
};

// A prompt that can never fit, with the reason.
struct Rejection {
  SeqId seq;
  uint64_t request;
  std::string reason;
};

// What the scheduler decided for a step: a plain record, by ids, that the executor runs and
// hands back to Scheduler::update_from_output once the step is done.
struct StepPlan {
  std::vector<ScheduledChunk> chunks;
  std::vector<std::pair<int32_t, int32_t>> block_copies;  // copy-on-write (source, destination)
  std::vector<SequenceRef> preempted;                     // lost their blocks; will recompute
  std::vector<SequenceRef> suspended;                     // back to waiting, their KV kept
  std::vector<Rejection> rejected;

  bool empty() const { return chunks.empty() && preempted.empty() && rejected.empty(); }
  // Every request the plan names (chunks, preemptions, rejections): busy until it is collected,
  // so that none of its sequences is freed while the plan names it.
  std::set<uint64_t> requests() const;
};

// What sampling decided from a step's logits, in the order it decided it: the "model runner
// output" the scheduler applies with the step's progress (Scheduler::update_from_output).
// Sampling reads the sequences as the plan left them and logs its changes here; nothing changes
// a sequence while the logit rows are read.
struct StepResults {
  struct Prediction {
    SeqId seq;
    double tokens;  // the output length now predicted (the length head, after the prompt)
  };
  struct Fork {
    SeqId parent, child;  // a parallel sample or beam split off before any token is appended
  };
  struct Token {
    SeqId seq;
    int32_t token;
  };
  std::vector<Prediction> predictions;
  std::vector<Fork> forks;
  std::vector<Token> tokens;
  std::vector<SeqId> finished;  // ended, failed or rejected; their blocks go back in this order
};

// With micro-batches in flight (pipeline parallelism), what one step may not take: the requests
// with a sequence in a step not yet collected, and more than `max_tokens` tokens (within the
// scheduler's own budget).
struct StepLimits {
  std::set<uint64_t> busy;
  int32_t max_tokens = std::numeric_limits<int32_t>::max();
};

}  // namespace baton
