#pragma once

// The workload of docs/scheduling.md's bar, for the scheduling simulator: 80% short answers and
// 20% long ones, each behind one of three shared system prompts (two for short answers, one for
// long ones), arriving as a Poisson process. Time is counted in engine steps.

#include <cstdint>
#include <vector>

namespace baton::schedule_sim {

struct WorkloadSpec {
  int32_t requests = 2000;
  double short_share = 0.8;
  int32_t short_min = 16, short_max = 32;  // output tokens, inclusive
  int32_t long_min = 256, long_max = 320;
  int32_t system_prompt_tokens = 32;
  int32_t question_tokens = 8;
  // Arrivals at `load` times the rate that `slots` sequences, each generating one token a step,
  // serve when each prompt's uncached tokens take tokens / prefill_tokens_per_step steps alone
  // (0: prompts cost nothing): one request per (mean output tokens / slots + prompt steps).
  // Uncached: all but the system prompt's whole blocks of block_size, which the prefix cache
  // holds after their first use.
  double load = 0.9;
  int32_t slots = 8;
  double prefill_tokens_per_step = 0;
  int32_t block_size = 16;
  uint32_t seed = 1;
};

struct SimulatedRequest {
  double arrival = 0;  // in steps
  std::vector<int32_t> prompt;
  int32_t output_tokens = 0;  // generated, and the request's max_tokens (as with ignore_eos)
  bool is_long = false;
};

std::vector<SimulatedRequest> mixed_workload(const WorkloadSpec& spec);

}  // namespace baton::schedule_sim
