// Length-aware scheduling with a fake clock: sjf's order, its aging bound, its choice of whom to
// preempt, its fallback to fcfs, and KV reservation by prediction.

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "baton/error.h"
#include "tests/core/serving/engine/length_scheduling_fixture.h"

namespace baton {
namespace {

using testing::LengthSchedulingTest;

TEST_F(LengthSchedulingTest, SjfAdmitsTheShortestPredictedOutputFirst) {
  BlockManager blocks(64, 4, false);
  Scheduler scheduler({.max_batch_tokens = 4,
                       .max_seqs = 8,
                       .scheduling_policy = SchedulingPolicy::kSjf,
                       .sjf_overtake = 0},
                      blocks, 256, clock());
  for (double predicted : {200.0, 10.0, 50.0, 10.0}) add(scheduler, make(4, predicted));
  EXPECT_EQ(ids(scheduler.waiting_order()), (std::vector<uint64_t>{2, 4, 3, 1}))
      << "equal predictions keep their arrival order";
  const StepPlan plan = scheduler.schedule();  // room for one 4-token prompt
  ASSERT_EQ(plan.chunks.size(), 1u);
  EXPECT_EQ(find(plan.chunks[0].seq)->id, 2u);
}

TEST_F(LengthSchedulingTest, FcfsAndPriorityIgnorePredictions) {
  BlockManager blocks(64, 4, false);
  Scheduler fcfs({.max_batch_tokens = 4, .max_seqs = 8}, blocks, 256, clock());
  for (double predicted : {200.0, 10.0}) add(fcfs, make(4, predicted));
  EXPECT_EQ(ids(fcfs.waiting_order()), (std::vector<uint64_t>{1, 2}));
  Scheduler by_priority(
      {.max_batch_tokens = 4, .max_seqs = 8, .scheduling_policy = SchedulingPolicy::kPriority},
      blocks, 256, clock());
  Sequence* low = make(4, 5);
  Sequence* high = make(4, 500);
  high->priority = 2;
  add(by_priority, low);
  add(by_priority, high);
  EXPECT_EQ(ids(by_priority.waiting_order()), (std::vector<uint64_t>{high->id, low->id}));
}

TEST_F(LengthSchedulingTest, AgingLetsALongRequestAheadAndMaxWaitBoundsItsWait) {
  BlockManager blocks(256, 4, false);
  Scheduler scheduler = one_slot_sjf(blocks, 2.0);
  Sequence* long_one = make(4, 300);
  add(scheduler, long_one);
  for (int step = 0; step < 50; ++step) complete(scheduler, scheduler.schedule());
  Sequence* medium = make(4, 250);
  Sequence* short_one = make(4, 20);
  add(scheduler, medium);
  add(scheduler, short_one);
  EXPECT_EQ(ids(scheduler.waiting_order()),
            (std::vector<uint64_t>{short_one->id, long_one->id, medium->id}))
      << "aged by 50 generated tokens, the long request (300 - 2 * 50 = 200) passes the newer "
         "medium one (250), not the short one";
  now_ += 60;  // the bound
  EXPECT_EQ(ids(scheduler.waiting_order())[0], long_one->id) << "no request waits past max_wait_s";
}

TEST_F(LengthSchedulingTest, TimeWithNothingGeneratedGivesNoAgingCredit) {
  BlockManager blocks(256, 4, false);
  Scheduler scheduler = one_slot_sjf(blocks, 2.0);
  Sequence* long_one = make(4, 300);
  add(scheduler, long_one);
  now_ += 50;
  Sequence* medium = make(4, 250);
  add(scheduler, medium);
  EXPECT_EQ(ids(scheduler.waiting_order()), (std::vector<uint64_t>{medium->id, long_one->id}));
}

// A prompt computed in chunks samples once, at its last chunk: only that step is a token.
TEST_F(LengthSchedulingTest, OnlyStepsThatSampleAge) {
  BlockManager blocks(256, 4, false);
  Scheduler scheduler({.max_batch_tokens = 8,
                       .max_seqs = 1,
                       .scheduling_policy = SchedulingPolicy::kSjf,
                       .sjf_aging = 1.0,
                       .sjf_overtake = 0},
                      blocks, 1024, clock());
  add(scheduler, make(40, 900));
  complete(scheduler, scheduler.schedule());  // the first 8 of 40 prompt tokens
  Sequence* waiting = make(4, 100);
  add(scheduler, waiting);
  for (int step = 0; step < 4; ++step)
    complete(scheduler, scheduler.schedule());  // the last sampled
  Sequence* newer = make(4, 98);
  add(scheduler, newer);
  EXPECT_EQ(ids(scheduler.waiting_order()), (std::vector<uint64_t>{newer->id, waiting->id}))
      << "one token generated: 100 - 1 = 99, not 100 - 4 chunks or 100 - 32 tokens";
}

TEST_F(LengthSchedulingTest, BadSjfSettingsAreRefusedNamingTheOption) {
  BlockManager blocks(64, 4, false);
  const auto refusal = [&](const LLMOptions& config) -> std::string {
    try {
      Scheduler scheduler(config, blocks, 256, clock());
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
      return e.what();
    }
    return "accepted";
  };
  for (double aging :
       {-1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_NE(refusal({.scheduling_policy = SchedulingPolicy::kSjf, .sjf_aging = aging})
                  .find("sjf_aging"),
              std::string::npos)
        << aging;
  }
  EXPECT_NE(refusal({.scheduling_policy = SchedulingPolicy::kSjf, .sjf_max_wait_s = 0.0})
                .find("sjf_max_wait_s"),
            std::string::npos);
  EXPECT_EQ(refusal({.scheduling_policy = SchedulingPolicy::kSjf, .sjf_aging = 0.0}), "accepted")
      << "no aging at all is plain sjf, bounded by max_wait_s alone";
}

// The credit is what one running sequence generates, not what they all do nor a share of the
// sequence cap, and a step that holds a share of them (a micro-batch, the others in flight)
// gives its share. Two one-token decodes fill each step's token budget, so nothing is admitted.
TEST_F(LengthSchedulingTest, AgingCountsTheTokensOneRunningSequenceGenerates) {
  BlockManager blocks(256, 4, false);
  Scheduler scheduler({.max_batch_tokens = 2,
                       .max_seqs = 3,
                       .scheduling_policy = SchedulingPolicy::kSjf,
                       .sjf_aging = 1.0,
                       .sjf_overtake = 0},
                      blocks, 1024, clock());
  Sequence* first = make(1, 900);
  add(scheduler, first);
  add(scheduler, make(1, 900));
  complete(scheduler, scheduler.schedule());
  ASSERT_EQ(scheduler.running_count(), 2u);
  Sequence* long_one = make(4, 100);
  add(scheduler, long_one);
  for (int step = 0; step < 20; ++step) complete(scheduler, scheduler.schedule());
  Sequence* medium = make(4, 70);
  Sequence* above = make(4, 83);
  add(scheduler, medium);
  add(scheduler, above);
  EXPECT_EQ(ids(scheduler.waiting_order()),
            (std::vector<uint64_t>{medium->id, long_one->id, above->id}))
      << "20 steps of two sequences: 100 - 20 = 80, not 100 - 40 nor 100 - 20 * 2 / 3";
  const StepLimits first_in_flight{.busy = {first->id}, .max_tokens = 1};
  for (int step = 0; step < 40; ++step) complete(scheduler, scheduler.schedule(first_in_flight));
  ASSERT_EQ(scheduler.running_count(), 2u);
  Sequence* newest = make(4, 55);
  add(scheduler, newest);
  EXPECT_EQ(ids(scheduler.waiting_order()),
            (std::vector<uint64_t>{medium->id, newest->id, long_one->id, above->id}))
      << "40 steps of one sequence in two add 20: the medium request at 70 - 20 = 50, the new "
         "one at 55, the long one at 100 - 40 = 60, the other at 83 - 20 = 63";
}

// Sent back by a preemption, a request has generated tokens of its own; they shrank its work
// left and are not credited to it again as waiting.
TEST_F(LengthSchedulingTest, APreemptedRequestIsNotCreditedForItsOwnTokens) {
  BlockManager blocks(5, 4, false);  // 20 tokens: two sequences of 9 do not fit
  Scheduler scheduler = two_slot_sjf(blocks);
  add(scheduler, make(4, 5));
  Sequence* long_one = make(4, 400);
  add(scheduler, long_one);
  const StepPlan plan = schedule_until_preemption(scheduler);
  ASSERT_EQ(named(plan.preempted), (std::vector<Sequence*>{long_one}));
  ASSERT_EQ(long_one->generated(), 5);
  Sequence* below = make(4, 393.5);
  Sequence* above = make(4, 394.5);
  add(scheduler, below);
  add(scheduler, above);
  EXPECT_EQ(ids(scheduler.waiting_order()),
            (std::vector<uint64_t>{below->id, long_one->id, above->id}))
      << "1 token generated since it was sent back: 400 - 5 - 1 = 394, not 400 - 5 - 6 (the "
         "steps it ran credited too) nor 400 - 5";
}

// A request that has waited past max_wait_s and needs a block sends another back rather than
// itself, even one with less work left.
TEST_F(LengthSchedulingTest, AStarvedRequestIsNotTheOneSentBackWhenAnotherCanGo) {
  BlockManager blocks(4, 4, false);  // 16 tokens: two sequences of 9 do not fit
  Scheduler scheduler = two_slot_sjf(blocks);
  Sequence* starved = make(4, 400);
  add(scheduler, starved);
  complete(scheduler, scheduler.schedule());
  now_ += 30;
  Sequence* short_one = make(4, 5);
  add(scheduler, short_one);
  now_ += 30;
  EXPECT_EQ(named(schedule_until_preemption(scheduler).preempted),
            (std::vector<Sequence*>{short_one}))
      << "the older request waited 60 s; the short one, 30 s, goes back though its work is less";
}

// A parallel sample or beam forked while its parent waits has waited as long as the parent.
TEST_F(LengthSchedulingTest, AForkWaitsAsLongAsItsParent) {
  BlockManager blocks(256, 4, false);
  Scheduler scheduler = one_slot_sjf(blocks, 1.0);
  Sequence* parent = make(4, 100);
  add(scheduler, parent);
  for (int step = 0; step < 10; ++step) complete(scheduler, scheduler.schedule());
  now_ += 5;
  const Sequence* child = fork(scheduler, parent);
  Sequence* newer = make(4, 95);
  add(scheduler, newer);
  EXPECT_EQ(child->arrival_time, parent->arrival_time);
  EXPECT_EQ(child->waiting_since, parent->waiting_since);
  EXPECT_EQ(child->waited_before, parent->waited_before);
  EXPECT_EQ(ids(scheduler.waiting_order()),
            (std::vector<uint64_t>{parent->id, child->id, newer->id}))
      << "both at 100 - 10 = 90, before the new request at 95";
}

// An old short request needs a block; the two newer ones have no work in the step yet: sjf
// sends back the one with the most predicted work left, fcfs the newest. Never one whose chunk
// this step's plan already holds.
TEST_F(LengthSchedulingTest, SjfPreemptsTheRequestWithTheMostPredictedWorkLeft) {
  const auto first_preempted = [&](SchedulingPolicy policy) {
    restart();
    BlockManager blocks(7, 4, false);  // 28 tokens in all
    Scheduler scheduler(
        {.max_batch_tokens = 64, .max_seqs = 4, .scheduling_policy = policy, .sjf_overtake = 0},
        blocks, 64, clock());
    Sequence* needing = make(8, 5);
    add(scheduler, needing);
    complete(scheduler, scheduler.schedule());
    add(scheduler, make(4, 400));  // admitted before the medium one
    complete(scheduler, scheduler.schedule());
    add(scheduler, make(4, 100));
    for (int step = 0; step < 8; ++step) {
      const StepPlan plan = scheduler.schedule();
      for (const SequenceRef& s : plan.preempted) {
        for (const ScheduledChunk& c : plan.chunks) EXPECT_NE(c.seq, s.seq) << "still planned";
      }
      if (!plan.preempted.empty()) return find(plan.preempted[0].seq)->id;
      complete(scheduler, plan);
    }
    return uint64_t{0};
  };
  EXPECT_EQ(first_preempted(SchedulingPolicy::kSjf), 2u) << "predicted 400 tokens";
  EXPECT_EQ(first_preempted(SchedulingPolicy::kFcfs), 3u) << "the newest";
}

TEST_F(LengthSchedulingTest, UntrustedPredictionsFallBackToFcfs) {
  BlockManager blocks(64, 4, false);
  Scheduler scheduler({.max_batch_tokens = 4,
                       .max_seqs = 8,
                       .scheduling_policy = SchedulingPolicy::kSjf,
                       .sjf_overtake = 0},
                      blocks, 256, clock());
  for (double predicted : {200.0, 10.0}) add(scheduler, make(4, predicted));
  EXPECT_EQ(ids(scheduler.waiting_order()), (std::vector<uint64_t>{2, 1}));
  scheduler.trust_predictions(false);
  EXPECT_EQ(ids(scheduler.waiting_order()), (std::vector<uint64_t>{1, 2})) << "arrival again";
  add(scheduler, make(4, 1.0));
  EXPECT_EQ(ids(scheduler.waiting_order()), (std::vector<uint64_t>{1, 2, 3}));
  scheduler.trust_predictions(true);
  EXPECT_EQ(ids(scheduler.waiting_order()), (std::vector<uint64_t>{3, 2, 1}));
}

// Two requests whose outputs together outgrow the pool: without reservation both start and one
// is preempted when the pool runs dry; reserving their predicted output, the second waits for
// the first to finish and nothing is preempted.
TEST_F(LengthSchedulingTest, ReservingThePredictionAvoidsThePreemption) {
  const auto run = [&](KvReservation reservation) {
    restart();
    BlockManager blocks(7, 4, false);  // 28 tokens
    Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4, .kv_reservation = reservation},
                        blocks, 64, clock());
    Sequence* a = make(4, 12, 12);
    Sequence* b = make(4, 12, 12);
    add(scheduler, a);
    add(scheduler, b);
    const SeqId a_seq = a->seq, b_seq = b->seq;  // `a` and `b` are gone once removed
    bool both_ran_at_once = false;
    while (!scheduler.empty()) {
      const StepPlan plan = scheduler.schedule();
      both_ran_at_once = both_ran_at_once || plan.chunks.size() == 2;
      complete(scheduler, plan);
      for (const SeqId seq : {a_seq, b_seq}) {
        const Sequence* s = scheduler.sequence(seq);  // null once it finished
        if (s && s->status == SequenceStatus::kRunning && s->generated() >= 12) {
          scheduler.remove(seq);
        }
      }
    }
    return std::pair(scheduler.preemption_count(), both_ran_at_once);
  };
  // 4 + 12 tokens each end in 4 blocks: 8 for both, one more than the pool.
  const auto [none_preempted, none_together] = run(KvReservation::kNone);
  EXPECT_GT(none_preempted, 0);
  EXPECT_TRUE(none_together);
  const auto [predicted_preempted, predicted_together] = run(KvReservation::kPredicted);
  EXPECT_EQ(predicted_preempted, 0);
  EXPECT_FALSE(predicted_together) << "4 + 12 * 1.25 tokens each, 5 blocks, do not fit twice";
}

TEST_F(LengthSchedulingTest, RecomputedTokensAreCounted) {
  BlockManager blocks(4, 4, false);  // 16 tokens
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4}, blocks, 64, clock());
  Sequence* a = make(8, 0);
  Sequence* b = make(8, 0);
  add(scheduler, a);
  add(scheduler, b);
  complete(scheduler, scheduler.schedule());
  complete(scheduler, scheduler.schedule());  // b is preempted with 8 tokens computed
  ASSERT_EQ(scheduler.preemption_count(), 1);
  EXPECT_EQ(scheduler.recomputed_tokens(), 0) << "counted when they are computed again";
  scheduler.remove(a->seq);
  scheduler.schedule();  // b is admitted again: the 8 tokens it had computed are computed again
  EXPECT_EQ(scheduler.recomputed_tokens(), 8);
}

}  // namespace
}  // namespace baton
