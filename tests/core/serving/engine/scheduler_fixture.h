#pragma once

// Sequences for scheduler tests, and a stand-in for the engine's step: each sequence's prompt
// tokens are distinct from every other's, so that no prefix is shared by accident.

#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "core/serving/engine/scheduler.h"

namespace baton::testing {

class SchedulerFixture : public ::testing::Test {
 protected:
  Sequence* make(int prompt, int priority = 0) {
    auto s = std::make_unique<Sequence>();
    s->id = s->seq = s->arrival = sequences_.size() + 1;
    s->priority = priority;
    s->tokens.resize(prompt);
    std::iota(s->tokens.begin(), s->tokens.end(), static_cast<int32_t>(1000 * s->id));
    s->prompt_length = prompt;
    sequences_.push_back(std::move(s));
    return sequences_.back().get();
  }
  // The engine's step as the scheduler sees it: the plan's progress (Scheduler::
  // update_from_output), then one sampled token where logits were wanted.
  void complete(Scheduler& scheduler, const StepPlan& plan) {
    scheduler.update_from_output(plan);
    for (const ScheduledChunk& c : plan.chunks) {
      if (c.needs_logits) find(c.seq)->tokens.push_back(7);
    }
  }
  // The fixture's sequence a plan names.
  Sequence* find(SeqId seq) const {
    for (const auto& s : sequences_) {
      if (s->seq == seq) return s.get();
    }
    return nullptr;
  }
  std::vector<Sequence*> named(const std::vector<SequenceRef>& refs) const {
    std::vector<Sequence*> out;
    for (const SequenceRef& r : refs) out.push_back(find(r.seq));
    return out;
  }
  std::vector<std::unique_ptr<Sequence>> sequences_;
};

}  // namespace baton::testing
