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
    s->id = s->arrival = sequences_.size() + 1;
    s->priority = priority;
    s->tokens.resize(prompt);
    std::iota(s->tokens.begin(), s->tokens.end(), static_cast<int32_t>(1000 * s->id));
    s->prompt_length = prompt;
    sequences_.push_back(std::move(s));
    return sequences_.back().get();
  }
  // Marks the plan's chunks computed and appends one sampled token where logits were wanted.
  static void complete(const StepPlan& plan) {
    for (const ScheduledChunk& c : plan.chunks) {
      c.sequence->computed += c.count;
      if (c.needs_logits) c.sequence->tokens.push_back(7);
    }
  }
  std::vector<std::unique_ptr<Sequence>> sequences_;
};

}  // namespace baton::testing
