// sjf's overtaking, with a fake clock: with every slot taken, a much shorter waiting request
// takes the slot of the running one with the most predicted work left, which waits with its KV
// kept and resumes without recomputing; that KV is the first to go when the pool runs dry.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "baton/error.h"
#include "tests/core/serving/engine/length_scheduling_fixture.h"

namespace baton {
namespace {

class OvertakingTest : public testing::LengthSchedulingTest {
 protected:
  Scheduler sjf(BlockManager& blocks, int32_t slots, double ratio) {
    return Scheduler({.max_batch_tokens = 64,
                      .max_seqs = slots,
                      .scheduling_policy = SchedulingPolicy::kSjf,
                      .sjf_aging = 1.0,
                      .sjf_overtake = ratio,
                      .sjf_max_wait_s = 60.0},
                     blocks, 1024, clock());
  }
  // Adds a request and runs `steps` steps, the first its prompt.
  Sequence* run(Scheduler& scheduler, int prompt, double predicted, int steps) {
    Sequence* s = make(prompt, predicted);
    add(scheduler, s);
    for (int step = 0; step < steps; ++step) complete(scheduler, scheduler.schedule());
    return s;
  }
  std::vector<Sequence*> planned(const StepPlan& plan) const {
    std::vector<Sequence*> out;
    for (const ScheduledChunk& c : plan.chunks) out.push_back(find(c.seq));
    return out;
  }
};

TEST_F(OvertakingTest, ASuspendedRequestKeepsItsKvAndResumesWithoutRecomputing) {
  BlockManager blocks(64, 4, false);
  Scheduler scheduler = sjf(blocks, 1, 4.0);
  Sequence* long_one = run(scheduler, 4, 900, 3);
  const int32_t computed = long_one->computed;
  const std::vector<int32_t> kv = long_one->blocks.blocks;
  Sequence* short_one = make(4, 20);
  add(scheduler, short_one);
  StepPlan plan = scheduler.schedule();
  EXPECT_EQ(named(plan.suspended), (std::vector<Sequence*>{long_one}))
      << "20 x 4 is within the 897 tokens the long one has left";
  EXPECT_EQ(planned(plan), (std::vector<Sequence*>{short_one}));
  EXPECT_EQ(long_one->status, SequenceStatus::kWaiting);
  EXPECT_EQ(long_one->computed, computed);
  EXPECT_EQ(long_one->blocks.blocks, kv);
  complete(scheduler, plan);
  for (int step = 0; step < 5; ++step) {
    plan = scheduler.schedule();
    EXPECT_TRUE(plan.suspended.empty()) << "the slot is not taken back";
    EXPECT_EQ(planned(plan), (std::vector<Sequence*>{short_one}));
    complete(scheduler, plan);
  }
  scheduler.remove(short_one->seq);
  plan = scheduler.schedule();
  ASSERT_EQ(plan.chunks.size(), 1u);
  EXPECT_EQ(find(plan.chunks[0].seq), long_one);
  EXPECT_EQ(plan.chunks[0].first, computed) << "resumed where it stopped";
  EXPECT_EQ(plan.chunks[0].count, 1);
  EXPECT_TRUE(plan.chunks[0].needs_logits);
  EXPECT_EQ(scheduler.suspension_count(), 1);
  EXPECT_EQ(scheduler.preemption_count(), 0);
  EXPECT_EQ(scheduler.recomputed_tokens(), 0);
}

TEST_F(OvertakingTest, NoOvertakingWithoutARatioOrBelowIt) {
  for (const auto& [ratio, predicted] : {std::pair(0.0, 20.0), std::pair(4.0, 300.0)}) {
    BlockManager blocks(64, 4, false);
    Scheduler scheduler = sjf(blocks, 1, ratio);
    Sequence* long_one = run(scheduler, 4, 900, 3);
    add(scheduler, make(4, predicted));
    const StepPlan plan = scheduler.schedule();
    EXPECT_TRUE(plan.suspended.empty()) << "ratio " << ratio << ", predicted " << predicted;
    EXPECT_EQ(planned(plan), (std::vector<Sequence*>{long_one}));
  }
}

TEST_F(OvertakingTest, EachShortRequestSuspendsTheRunningOneWithTheMostWorkLeft) {
  BlockManager blocks(64, 4, false);
  Scheduler scheduler = sjf(blocks, 3, 4.0);
  Sequence* medium = run(scheduler, 4, 400, 1);
  Sequence* long_one = run(scheduler, 4, 900, 1);
  Sequence* small = run(scheduler, 4, 60, 1);
  Sequence* first = make(4, 20);
  Sequence* second = make(4, 30);
  add(scheduler, second);
  add(scheduler, first);
  const StepPlan plan = scheduler.schedule();
  EXPECT_EQ(named(plan.suspended), (std::vector<Sequence*>{long_one, medium}))
      << "the shortest waiting request takes the longest one's slot, the next the next";
  EXPECT_EQ(small->status, SequenceStatus::kRunning) << "30 x 4 is more than its 59 left";
  EXPECT_EQ(first->status, SequenceStatus::kRunning);
  EXPECT_EQ(second->status, SequenceStatus::kRunning);
}

TEST_F(OvertakingTest, ARequestPastTheBoundIsNotSuspendedAndOvertakesAsTheShortest) {
  {
    BlockManager blocks(64, 4, false);
    Scheduler scheduler = sjf(blocks, 1, 4.0);
    Sequence* long_one = run(scheduler, 4, 900, 3);
    now_ += 60;
    add(scheduler, make(4, 20));
    EXPECT_EQ(planned(scheduler.schedule()), (std::vector<Sequence*>{long_one}))
        << "it has waited max_wait_s since it arrived";
  }
  BlockManager blocks(512, 4, false);  // room for the starved request's 900 predicted tokens
  Scheduler scheduler = sjf(blocks, 1, 4.0);
  Sequence* medium = run(scheduler, 4, 100, 3);
  Sequence* starved = make(4, 900);
  starved->arrival_time = now_ - 60;
  add(scheduler, starved);
  const StepPlan plan = scheduler.schedule();
  EXPECT_EQ(named(plan.suspended), (std::vector<Sequence*>{medium}));
  EXPECT_EQ(planned(plan), (std::vector<Sequence*>{starved}));
}

// Overtaking waits for room for the short request's predicted output beside what runs: a
// suspended sequence's KV would otherwise soon be dropped and recomputed.
TEST_F(OvertakingTest, NoOvertakingWhenTheShortRequestsOutputWouldNotFit) {
  for (const auto& [predicted, overtakes] : {std::pair(40.0, false), std::pair(20.0, true)}) {
    BlockManager blocks(10, 4, false);  // 40 tokens; the long request holds 8 of them
    Scheduler scheduler = sjf(blocks, 1, 4.0);
    run(scheduler, 4, 900, 3);
    add(scheduler, make(4, predicted));
    EXPECT_EQ(scheduler.schedule().suspended.size(), overtakes ? 1u : 0u)
        << "4 + " << predicted << " tokens";
  }
}

TEST_F(OvertakingTest, ASuspendedSequencesKvIsTheFirstToGoWhenThePoolRunsDry) {
  BlockManager blocks(6, 4, false);  // 24 tokens
  Scheduler scheduler = sjf(blocks, 1, 4.0);
  Sequence* long_one = run(scheduler, 8, 900, 1);  // 8 tokens computed, 2 blocks
  Sequence* short_one = make(4, 12);               // 16 tokens expected: the other 4 blocks
  add(scheduler, short_one);
  StepPlan plan = scheduler.schedule();
  ASSERT_EQ(named(plan.suspended), (std::vector<Sequence*>{long_one}));
  while (plan.preempted.empty() && short_one->tokens.size() < 18) {
    complete(scheduler, plan);
    plan = scheduler.schedule();
  }
  EXPECT_EQ(named(plan.preempted), (std::vector<Sequence*>{long_one}))
      << "the short request outgrew its prediction: the suspended KV goes, not a running one";
  EXPECT_EQ(planned(plan), (std::vector<Sequence*>{short_one}));
  EXPECT_EQ(long_one->computed, 0);
  EXPECT_TRUE(long_one->blocks.blocks.empty());
  complete(scheduler, plan);
  scheduler.remove(short_one->seq);
  plan = scheduler.schedule();
  EXPECT_EQ(planned(plan), (std::vector<Sequence*>{long_one}));
  EXPECT_EQ(scheduler.recomputed_tokens(), 8);
}

// A new request at the head of the queue that does not fit takes the KV of a suspended one
// behind it rather than wait for room that nothing running will free.
TEST_F(OvertakingTest, ARequestAheadTakesTheKvOfASuspendedOneBehindIt) {
  BlockManager blocks(6, 4, false);  // 24 tokens
  Scheduler scheduler = sjf(blocks, 1, 4.0);
  Sequence* long_one = run(scheduler, 8, 900, 1);
  Sequence* short_one = make(4, 12);
  add(scheduler, short_one);
  ASSERT_EQ(named(scheduler.schedule().suspended), (std::vector<Sequence*>{long_one}));
  scheduler.remove(short_one->seq);
  Sequence* wide = make(20, 10);  // 5 blocks; 4 are free
  add(scheduler, wide);
  const StepPlan plan = scheduler.schedule();
  EXPECT_EQ(named(plan.preempted), (std::vector<Sequence*>{long_one}));
  EXPECT_EQ(planned(plan), (std::vector<Sequence*>{wide}));
  EXPECT_TRUE(long_one->blocks.blocks.empty());
}

// The sequences of one request (parallel samples, beams) step together: a sibling left running
// would hold its slot waiting for the suspended one. With forks past the slot cap, a suspension
// would free no slot at all.
TEST_F(OvertakingTest, ARequestOfSeveralSequencesIsNotSuspended) {
  for (int32_t slots : {1, 2}) {
    BlockManager blocks(64, 4, false);
    Scheduler scheduler = sjf(blocks, slots, 4.0);
    Sequence* parent = run(scheduler, 4, 900, 3);
    fork(scheduler, parent);
    add(scheduler, make(4, 20));
    EXPECT_TRUE(scheduler.schedule().suspended.empty()) << slots << " slots";
  }
}

// Overtaking lets a request in only when admission will: with reservation, what the short request
// sets aside must fit once the suspended one's reservation is released.
TEST_F(OvertakingTest, UnderReservationTheShortRequestsReservationMustFit) {
  for (const auto& [predicted, overtakes] : {std::pair(100.0, true), std::pair(120.0, false)}) {
    BlockManager blocks(40, 4, false);  // 160 tokens
    Scheduler scheduler({.max_batch_tokens = 64,
                         .max_seqs = 1,
                         .scheduling_policy = SchedulingPolicy::kSjf,
                         .sjf_overtake = 4.0,
                         .kv_reservation = KvReservation::kPredicted},
                        blocks, 1024, clock());
    run(scheduler, 4, 900, 3);  // sets aside 4 + 512 tokens, more than the pool
    Sequence* short_one = make(4, predicted);
    add(scheduler, short_one);
    const StepPlan plan = scheduler.schedule();
    EXPECT_EQ(plan.suspended.size(), overtakes ? 1u : 0u) << predicted;
    EXPECT_EQ(short_one->status == SequenceStatus::kRunning, overtakes)
        << "4 + 1.25 x " << predicted << " tokens against 38 free blocks";
  }
}

TEST_F(OvertakingTest, UntrustedPredictionsTurnOvertakingOff) {
  BlockManager blocks(64, 4, false);
  Scheduler scheduler = sjf(blocks, 1, 4.0);
  run(scheduler, 4, 900, 3);
  add(scheduler, make(4, 20));
  scheduler.trust_predictions(false);
  EXPECT_TRUE(scheduler.schedule().suspended.empty());
}

TEST_F(OvertakingTest, RemovingASuspendedRequestGivesItsBlocksBack) {
  BlockManager blocks(64, 4, false);
  Scheduler scheduler = sjf(blocks, 1, 4.0);
  Sequence* long_one = run(scheduler, 4, 900, 3);
  add(scheduler, make(4, 20));
  const int32_t before = blocks.available_blocks();
  ASSERT_EQ(named(scheduler.schedule().suspended), (std::vector<Sequence*>{long_one}));
  const int32_t short_took = before - blocks.available_blocks();
  scheduler.remove(long_one->seq);
  EXPECT_EQ(blocks.available_blocks(), before - short_took + 2) << "the long one's 2 blocks";
  EXPECT_EQ(scheduler.waiting_count(), 0u);
}

// Random arrivals of short and long requests into a pool that runs dry: every step does work
// until the last request ends (no stall with requests waiting), each request generates its
// length, and every block comes back.
TEST_F(OvertakingTest, AMixedWorkloadUnderATightPoolAlwaysFinishes) {
  std::mt19937 random(7);
  const auto draw = [&](int from, int count) { return from + static_cast<int>(random() % count); };
  BlockManager blocks(48, 4, false);  // 192 tokens: a few long requests fill it
  Scheduler scheduler = sjf(blocks, 4, 2.0);
  std::vector<std::pair<SeqId, int>> requests;
  for (int step = 0; step < 20000 && (requests.size() < 300 || !scheduler.empty()); ++step) {
    if (requests.size() < 300 && random() % 2 == 0) {
      const int length = random() % 5 == 0 ? draw(60, 20) : draw(4, 8);
      Sequence* s = make(draw(4, 8), length, length);
      add(scheduler, s);
      requests.emplace_back(s->seq, length);
    }
    const StepPlan plan = scheduler.schedule();
    ASSERT_TRUE(plan.rejected.empty());
    ASSERT_TRUE(!plan.chunks.empty() || !plan.preempted.empty() || scheduler.empty())
        << "a step without work while " << scheduler.waiting_count() << " requests wait, step "
        << step;
    complete(scheduler, plan);
    for (const auto& [seq, length] : requests) {
      const Sequence* s = scheduler.sequence(seq);  // null once it finished
      if (s && s->status == SequenceStatus::kRunning && s->generated() >= length) {
        EXPECT_EQ(s->generated(), length);
        scheduler.remove(seq);
      }
    }
  }
  EXPECT_TRUE(scheduler.empty());
  EXPECT_EQ(requests.size(), 300u);
  EXPECT_EQ(blocks.available_blocks(), blocks.total_blocks());
  EXPECT_GT(scheduler.suspension_count(), 0);
  EXPECT_GT(scheduler.preemption_count(), 0) << "the pool was meant to run dry";
}

TEST_F(OvertakingTest, ARatioOfOneOrLessIsRefusedNamingTheOption) {
  BlockManager blocks(64, 4, false);
  for (double ratio : {0.5, 1.0, -2.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
    try {
      sjf(blocks, 1, ratio);
      ADD_FAILURE() << ratio << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("sjf_overtake"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(sjf(blocks, 1, 0.0));
  EXPECT_NO_THROW(sjf(blocks, 1, 1.5));
}

}  // namespace
}  // namespace baton
