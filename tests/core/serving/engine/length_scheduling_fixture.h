#pragma once

// Scheduler tests of length-aware scheduling: sequences with predicted outputs, a fake clock,
// and sjf schedulers with their slots taken.

#include <cstdint>
#include <vector>

#include "tests/core/serving/engine/scheduler_fixture.h"

namespace baton::testing {

class LengthSchedulingTest : public SchedulerFixture {
 protected:
  Sequence* make(int prompt, double predicted, int max_output = 512) {
    Sequence* s = SchedulerFixture::make(prompt);
    s->predicted_output = predicted;
    s->max_output = max_output;
    return s;
  }
  Scheduler::Clock clock() {
    return [this] { return now_; };
  }
  // sjf with one slot, held by a long request that keeps generating: what is added next waits.
  Scheduler one_slot_sjf(BlockManager& blocks, double aging) {
    Scheduler scheduler({.max_batch_tokens = 64,
                         .max_seqs = 1,
                         .scheduling_policy = SchedulingPolicy::kSjf,
                         .sjf_aging = aging,
                         .sjf_overtake = 0,
                         .sjf_max_wait_s = 60.0},
                        blocks, 1024, clock());
    add(scheduler, make(4, 900));
    complete(scheduler, scheduler.schedule());
    return scheduler;
  }
  // sjf with two slots over a pool too small for both sequences to grow far.
  Scheduler two_slot_sjf(BlockManager& blocks) {
    return Scheduler({.max_batch_tokens = 64,
                      .max_seqs = 2,
                      .scheduling_policy = SchedulingPolicy::kSjf,
                      .sjf_aging = 1.0,
                      .sjf_overtake = 0,
                      .sjf_max_wait_s = 60.0},
                     blocks, 64, clock());
  }
  // Steps (each completed) until one preempts, at most 8; that step's plan.
  StepPlan schedule_until_preemption(Scheduler& scheduler) {
    StepPlan plan;
    for (int step = 0; step < 8 && plan.preempted.empty(); ++step) {
      plan = scheduler.schedule();
      complete(scheduler, plan);
    }
    return plan;
  }
  static std::vector<uint64_t> ids(const std::vector<const Sequence*>& order) {
    std::vector<uint64_t> out;
    for (const Sequence* s : order) out.push_back(s->id);
    return out;
  }

  double now_ = 100.0;
};

}  // namespace baton::testing
