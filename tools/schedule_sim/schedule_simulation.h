#pragma once

// Baton's scheduler run on a simulated engine: every step, what it plans is computed at once
// and each sequence whose prompt is done samples one token. Time is counted in decode steps: a
// step takes one, plus its prompt work (every chunk token but a decode of the last sampled
// token: prefill and recompute) over prefill_tokens_per_step; a prompt's cached prefix costs
// nothing, as in the engine, and a plan with nothing to compute takes no time. A decode step
// costs one whatever the number of sequences in it, as where reading the weights dominates; on
// the demo model a step of one sequence takes about a third of one of eight, so policies that
// run fewer sequences at once (reservation under a small pool) fare worse here than when
// served. Without a model and a host's noise, a policy's latency figures repeat exactly (with
// one standard library's random distributions), so that policies compare on many seeds in
// seconds. Lengths are predicted, and predictions trusted, as the engine does it
// (OnlineLengthPredictor learned from finished requests, PredictionLog's tau).

#include <cstdint>
#include <vector>

#include "core/serving/engine/scheduler.h"
#include "tools/schedule_sim/mixed_workload.h"

namespace baton::schedule_sim {

struct SimulationConfig {
  // The scheduler's options (max_seqs, the policy and its sjf_ knobs, kv_reservation) and the
  // KV cache's block size and prefix caching, which is on as the engine's default: prompts reuse
  // the shared system prompt.
  LLMOptions options;
  int32_t kv_blocks = 128;
  int32_t context = 512;
  // The prompt tokens that take as long as a decode step; 0: prompts cost nothing.
  double prefill_tokens_per_step = 0;
  // The scheduler's clock reads time × step_seconds, which is what --sjf-max-wait bounds.
  double step_seconds = 0.01;
};

struct SimulationResult {
  // Per request, in the workload's order: time from its arrival to its last token.
  std::vector<double> latencies;
  double time = 0;    // until the last request finished
  int64_t steps = 0;  // plans run
  int64_t preemptions = 0;
  int64_t suspensions = 0;
  int64_t recomputed_tokens = 0;
  // Steps that left a slot free while a request waited (for KV room, or behind a request ahead
  // of it that did not fit), and steps that computed nothing while requests were in: a stall.
  int64_t idle_slot_steps = 0;
  int64_t empty_steps = 0;
  double mean_running = 0;  // sequences per step
};

// `workload` is in arrival order. Throws Error when a request's prompt and output do not fit the
// context, the scheduler rejects a request, or the run does not end.
SimulationResult simulate(const std::vector<SimulatedRequest>& workload,
                          const SimulationConfig& config);

double mean(const std::vector<double>& values);
// The nearest-rank percentile, p in (0, 100].
double percentile(std::vector<double> values, double p);

}  // namespace baton::schedule_sim
