#pragma once

#include <cstdint>
#include <vector>

#include "core/serving/engine/block_manager.h"

namespace baton {

enum class SequenceStatus { kWaiting, kRunning };

// One token stream as the scheduler sees it: a request's prompt and what has been generated after
// it, its KV blocks and what decides its order. `computed` counts the tokens whose K/V is in the
// cache; the scheduler hands each sequence the difference as work, which makes prefill, chunked
// prefill, decode and recompute after preemption the same thing. The sampler's side of the same
// sequence is its SamplingState (sampling_state.h).
struct Sequence {
  uint64_t id = 0;           // the request's; its parallel samples and beams share it
  uint64_t seq = 0;          // the sequence's own (SeqId): what a StepPlan names it by
  int32_t priority = 0;      // higher runs first (SchedulingPolicy::kPriority)
  uint64_t arrival = 0;      // admission order among equal priorities
  double arrival_time = -1;  // on the scheduler's clock, set when it is first added
  // sjf's aging, on the scheduler's generation clock: when the sequence last began to wait, and
  // what it waited through before that (a preemption sends it back to wait again).
  double waiting_since = 0;
  double waited_before = 0;
  // Output tokens the request is expected to generate (LengthPredictor) and may generate.
  double predicted_output = 0;
  int32_t max_output = 0;
  std::vector<int32_t> tokens;  // prompt then generated
  int32_t prompt_length = 0;
  int32_t computed = 0;
  int32_t cached_prompt_tokens = 0;  // served by the prefix cache at admission
  int32_t preempted_computed = 0;    // tokens computed when it was last preempted
  bool prefix_looked_up = false;
  bool suspended = false;  // waiting with its KV kept, overtaken by a shorter request
  uint64_t adapter = 0;    // keeps prefix-cache blocks apart per LoRA adapter; 0: none
  int32_t lora_slot = -1;  // the adapter's LoRA slot; -1: the base model alone
  BlockTable blocks;
  SequenceStatus status = SequenceStatus::kWaiting;

  int32_t pending() const { return static_cast<int32_t>(tokens.size()) - computed; }
  int32_t generated() const { return static_cast<int32_t>(tokens.size()) - prompt_length; }
};

}  // namespace baton
