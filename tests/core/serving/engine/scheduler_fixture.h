#pragma once

// Sequences for scheduler tests, and a stand-in for the engine's step: each sequence's prompt
// tokens are distinct from every other's, so that no prefix is shared by accident.

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "core/serving/engine/scheduler.h"

namespace baton::testing {

class SchedulerFixture : public ::testing::Test {
 protected:
  // A new sequence, for add(): the pointer stays valid while the scheduler holds it, so that a
  // test can read what the scheduler made of it.
  Sequence* make(int prompt, int priority = 0) {
    auto s = std::make_unique<Sequence>();
    s->id = s->seq = s->arrival = next_seq();
    s->priority = priority;
    s->tokens.resize(prompt);
    std::iota(s->tokens.begin(), s->tokens.end(), static_cast<int32_t>(1000 * s->id));
    s->prompt_length = prompt;
    Sequence* made = s.get();
    made_.emplace_back(made->seq, made);
    unadded_[made] = std::move(s);
    return made;
  }
  // Gives a sequence from make() to the scheduler.
  void add(Scheduler& scheduler, Sequence* s) {
    const auto it = unadded_.find(s);
    ASSERT_NE(it, unadded_.end()) << "sequence " << s->seq << " was added already";
    std::unique_ptr<Sequence> owned = std::move(it->second);
    unadded_.erase(it);
    scheduler.add(std::move(owned));
  }
  // A parallel sample or beam of `parent`, forked by the scheduler.
  const Sequence* fork(Scheduler& scheduler, const Sequence* parent) {
    return &scheduler.fork(parent->seq, next_seq());
  }
  // Forgets every sequence made so far; ids start at 1 again.
  void restart() {
    made_.clear();
    unadded_.clear();
    next_seq_ = 1;
  }
  // The engine's step as the scheduler sees it: the plan's progress and one sampled token where
  // logits were wanted (Scheduler::update_from_output).
  void complete(Scheduler& scheduler, const StepPlan& plan) {
    StepResults results;
    for (const ScheduledChunk& c : plan.chunks) {
      if (c.needs_logits) results.tokens.push_back({c.seq, 7});
    }
    scheduler.update_from_output(plan, results);
  }
  // The sequence from make() a plan names (compared by address: the scheduler may have ended it).
  Sequence* find(SeqId seq) const {
    for (const auto& [id, s] : made_) {
      if (id == seq) return s;
    }
    return nullptr;
  }
  std::vector<Sequence*> named(const std::vector<SequenceRef>& refs) const {
    std::vector<Sequence*> out;
    for (const SequenceRef& r : refs) out.push_back(find(r.seq));
    return out;
  }

 private:
  SeqId next_seq() { return next_seq_++; }

  SeqId next_seq_ = 1;
  std::vector<std::pair<SeqId, Sequence*>> made_;  // every sequence made, in that order
  std::map<Sequence*, std::unique_ptr<Sequence>> unadded_;
};

}  // namespace baton::testing
