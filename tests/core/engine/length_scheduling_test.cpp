// Length-aware scheduling with a fake clock: sjf's order, its aging bound, its choice of whom to
// preempt, its fallback to fcfs, and KV reservation by prediction.

#include <gtest/gtest.h>

#include "baton/error.h"
#include "tests/core/engine/scheduler_fixture.h"

namespace baton {
namespace {

class LengthSchedulingTest : public testing::SchedulerFixture {
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
  static std::vector<uint64_t> ids(const std::vector<const Sequence*>& order) {
    std::vector<uint64_t> out;
    for (const Sequence* s : order) out.push_back(s->id);
    return out;
  }

  double now_ = 100.0;
};

TEST_F(LengthSchedulingTest, SjfAdmitsTheShortestPredictedOutputFirst) {
  BlockManager blocks(64, 4, false);
  Scheduler scheduler({.max_batch_tokens = 4, .max_seqs = 8, .policy = SchedulingPolicy::kSjf},
                      blocks, 256, clock());
  for (double predicted : {200.0, 10.0, 50.0, 10.0}) scheduler.add(make(4, predicted));
  EXPECT_EQ(ids(scheduler.waiting_order()), (std::vector<uint64_t>{2, 4, 3, 1}))
      << "equal predictions keep their arrival order";
  const StepPlan plan = scheduler.schedule();  // room for one 4-token prompt
  ASSERT_EQ(plan.chunks.size(), 1u);
  EXPECT_EQ(plan.chunks[0].sequence->id, 2u);
}

TEST_F(LengthSchedulingTest, FcfsAndPriorityIgnorePredictions) {
  BlockManager blocks(64, 4, false);
  Scheduler fcfs({.max_batch_tokens = 4, .max_seqs = 8}, blocks, 256, clock());
  for (double predicted : {200.0, 10.0}) fcfs.add(make(4, predicted));
  EXPECT_EQ(ids(fcfs.waiting_order()), (std::vector<uint64_t>{1, 2}));
  Scheduler by_priority(
      {.max_batch_tokens = 4, .max_seqs = 8, .policy = SchedulingPolicy::kPriority}, blocks, 256,
      clock());
  Sequence* low = make(4, 5);
  Sequence* high = make(4, 500);
  high->priority = 2;
  by_priority.add(low);
  by_priority.add(high);
  EXPECT_EQ(ids(by_priority.waiting_order()), (std::vector<uint64_t>{high->id, low->id}));
}

// One running request holds the only slot; the others wait while it generates.
TEST_F(LengthSchedulingTest, AgingLetsALongRequestAheadAndMaxWaitBoundsItsWait) {
  BlockManager blocks(256, 4, false);
  Scheduler scheduler({.max_batch_tokens = 64,
                       .max_seqs = 1,
                       .policy = SchedulingPolicy::kSjf,
                       .aging = 2.0,
                       .max_wait_s = 60.0},
                      blocks, 1024, clock());
  scheduler.add(make(4, 900));
  complete(scheduler.schedule());
  Sequence* long_one = make(4, 300);
  scheduler.add(long_one);
  for (int step = 0; step < 50; ++step) complete(scheduler.schedule());
  Sequence* medium = make(4, 250);
  Sequence* short_one = make(4, 20);
  scheduler.add(medium);
  scheduler.add(short_one);
  EXPECT_EQ(ids(scheduler.waiting_order()),
            (std::vector<uint64_t>{short_one->id, long_one->id, medium->id}))
      << "aged by 50 generated tokens, the long request (300 - 2 * 50 = 200) passes the newer "
         "medium one (250), not the short one";
  now_ += 59;
  EXPECT_EQ(ids(scheduler.waiting_order())[0], short_one->id)
      << "time with nothing generated gives no aging credit";
  now_ += 1;  // 60 s: the bound
  EXPECT_EQ(ids(scheduler.waiting_order())[0], long_one->id) << "no request waits past max_wait_s";
}

TEST_F(LengthSchedulingTest, BadSjfSettingsAreRefusedNamingTheFlag) {
  BlockManager blocks(64, 4, false);
  const auto refusal = [&](const SchedulerConfig& config) -> std::string {
    try {
      Scheduler scheduler(config, blocks, 256, clock());
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(refusal({.policy = SchedulingPolicy::kSjf, .aging = -1.0}).find("--sjf-aging"),
            std::string::npos);
  EXPECT_NE(refusal({.policy = SchedulingPolicy::kSjf, .max_wait_s = 0.0}).find("--sjf-max-wait"),
            std::string::npos);
  EXPECT_EQ(refusal({.policy = SchedulingPolicy::kSjf, .aging = 0.0}), "accepted")
      << "no aging at all is plain sjf, bounded by max_wait_s alone";
}

// The credit is what one running sequence generates, not what they all do, and a step that
// holds a share of them (a micro-batch, the others in flight) gives its share.
TEST_F(LengthSchedulingTest, AgingCountsTheTokensOneRunningSequenceGenerates) {
  BlockManager blocks(256, 4, false);
  Scheduler scheduler(
      {.max_batch_tokens = 64, .max_seqs = 2, .policy = SchedulingPolicy::kSjf, .aging = 1.0},
      blocks, 1024, clock());
  Sequence* first = make(4, 900);
  scheduler.add(first);
  scheduler.add(make(4, 900));
  complete(scheduler.schedule());
  Sequence* long_one = make(4, 100);
  scheduler.add(long_one);
  for (int step = 0; step < 20; ++step) complete(scheduler.schedule());
  Sequence* medium = make(4, 70);
  scheduler.add(medium);
  EXPECT_EQ(ids(scheduler.waiting_order()), (std::vector<uint64_t>{medium->id, long_one->id}))
      << "20 steps of two sequences: 100 - 20 = 80, not 100 - 40";
  const StepLimits first_in_flight{.busy = {first->id}};
  for (int step = 0; step < 40; ++step) complete(scheduler.schedule(first_in_flight));
  Sequence* newest = make(4, 55);
  scheduler.add(newest);
  EXPECT_EQ(ids(scheduler.waiting_order()),
            (std::vector<uint64_t>{medium->id, newest->id, long_one->id}))
      << "40 steps of one sequence in two add 20: the medium request at 70 - 20 = 50, the new "
         "one at 55, the long one at 100 - 40 = 60";
}

// An old short request needs a block; the two newer ones have no work in the step yet: sjf
// sends back the one with the most predicted work left, fcfs the newest. Never one whose chunk
// this step's plan already holds.
TEST_F(LengthSchedulingTest, SjfPreemptsTheRequestWithTheMostPredictedWorkLeft) {
  const auto first_preempted = [&](SchedulingPolicy policy) {
    sequences_.clear();
    BlockManager blocks(7, 4, false);  // 28 tokens in all
    Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4, .policy = policy}, blocks, 64,
                        clock());
    Sequence* needing = make(8, 5);
    scheduler.add(needing);
    complete(scheduler.schedule());
    scheduler.add(make(4, 400));  // admitted before the medium one
    complete(scheduler.schedule());
    scheduler.add(make(4, 100));
    for (int step = 0; step < 8; ++step) {
      const StepPlan plan = scheduler.schedule();
      for (const Sequence* s : plan.preempted) {
        for (const ScheduledChunk& c : plan.chunks) EXPECT_NE(c.sequence, s) << "still planned";
      }
      if (!plan.preempted.empty()) return plan.preempted[0]->id;
      complete(plan);
    }
    return uint64_t{0};
  };
  EXPECT_EQ(first_preempted(SchedulingPolicy::kSjf), 2u) << "predicted 400 tokens";
  EXPECT_EQ(first_preempted(SchedulingPolicy::kFcfs), 3u) << "the newest";
}

TEST_F(LengthSchedulingTest, UntrustedPredictionsFallBackToFcfs) {
  BlockManager blocks(64, 4, false);
  Scheduler scheduler({.max_batch_tokens = 4, .max_seqs = 8, .policy = SchedulingPolicy::kSjf},
                      blocks, 256, clock());
  for (double predicted : {200.0, 10.0}) scheduler.add(make(4, predicted));
  EXPECT_EQ(ids(scheduler.waiting_order()), (std::vector<uint64_t>{2, 1}));
  scheduler.trust_predictions(false);
  EXPECT_EQ(ids(scheduler.waiting_order()), (std::vector<uint64_t>{1, 2})) << "arrival again";
  scheduler.add(make(4, 1.0));
  EXPECT_EQ(ids(scheduler.waiting_order()), (std::vector<uint64_t>{1, 2, 3}));
  scheduler.trust_predictions(true);
  EXPECT_EQ(ids(scheduler.waiting_order()), (std::vector<uint64_t>{3, 2, 1}));
}

// Two requests whose outputs together outgrow the pool: without reservation both start and one
// is preempted when the pool runs dry; reserving their predicted output, the second waits for
// the first to finish and nothing is preempted.
TEST_F(LengthSchedulingTest, ReservingThePredictionAvoidsThePreemption) {
  const auto run = [&](KvReservation reservation) {
    sequences_.clear();
    BlockManager blocks(7, 4, false);  // 28 tokens
    Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4, .reservation = reservation}, blocks,
                        64, clock());
    Sequence* a = make(4, 12, 12);
    Sequence* b = make(4, 12, 12);
    scheduler.add(a);
    scheduler.add(b);
    bool both_ran_at_once = false;
    while (!scheduler.empty()) {
      const StepPlan plan = scheduler.schedule();
      both_ran_at_once = both_ran_at_once || plan.chunks.size() == 2;
      complete(plan);
      for (Sequence* s : {a, b}) {
        if (s->status == SequenceStatus::kRunning && s->generated() >= 12) scheduler.remove(s);
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
  scheduler.add(a);
  scheduler.add(b);
  complete(scheduler.schedule());
  complete(scheduler.schedule());  // b is preempted with 8 tokens computed
  ASSERT_EQ(scheduler.preemption_count(), 1);
  EXPECT_EQ(scheduler.recomputed_tokens(), 0) << "counted when they are computed again";
  scheduler.remove(a);
  scheduler.schedule();  // b is admitted again: the 8 tokens it had computed are computed again
  EXPECT_EQ(scheduler.recomputed_tokens(), 8);
}

TEST(SchedulingPolicyNames, ParseAndRefuseUnknownNames) {
  EXPECT_EQ(parse_scheduling_policy("sjf"), SchedulingPolicy::kSjf);
  EXPECT_EQ(parse_kv_reservation("predicted"), KvReservation::kPredicted);
  EXPECT_THROW(parse_scheduling_policy("lifo"), Error);
  EXPECT_THROW(parse_kv_reservation("all"), Error);
}

}  // namespace
}  // namespace baton
