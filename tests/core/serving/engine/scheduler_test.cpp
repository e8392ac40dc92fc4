#include "core/serving/engine/scheduler.h"

#include <gtest/gtest.h>

#include <string>

#include "baton/error.h"

#include "tests/core/serving/engine/scheduler_fixture.h"

namespace baton {
namespace {

class SchedulerTest : public testing::SchedulerFixture {};

TEST_F(SchedulerTest, LongPromptIsPrefilledInChunksOfTheTokenBudget) {
  BlockManager blocks(16, 4, false);
  Scheduler scheduler({.max_batch_tokens = 8, .max_seqs = 4}, blocks, 64);
  Sequence* s = make(20);
  add(scheduler, s);
  std::vector<int32_t> counts;
  for (int step = 0; step < 4; ++step) {
    const StepPlan plan = scheduler.schedule();
    ASSERT_EQ(plan.chunks.size(), 1u);
    counts.push_back(plan.chunks[0].count);
    EXPECT_EQ(plan.chunks[0].needs_logits, step >= 2);
    complete(scheduler, plan);
  }
  EXPECT_EQ(counts, (std::vector<int32_t>{8, 8, 4, 1}));  // then one decode token
}

TEST_F(SchedulerTest, DecodesRideAlongWithANewPromptsChunk) {
  BlockManager blocks(32, 4, false);
  Scheduler scheduler({.max_batch_tokens = 10, .max_seqs = 4}, blocks, 64);
  Sequence* a = make(3);
  add(scheduler, a);
  complete(scheduler, scheduler.schedule());  // a prefilled, now decoding
  Sequence* b = make(30);
  add(scheduler, b);
  const StepPlan plan = scheduler.schedule();
  ASSERT_EQ(plan.chunks.size(), 2u);
  EXPECT_EQ(find(plan.chunks[0].seq), a);
  EXPECT_EQ(plan.chunks[0].count, 1);
  EXPECT_EQ(find(plan.chunks[1].seq), b);
  EXPECT_EQ(plan.chunks[1].count, 9) << "the rest of the budget";
}

// With long_prefill_token_threshold, a long prompt takes at most that many tokens a step, and the
// rest of the budget goes to the next prompt instead of waiting for the long one to finish.
TEST_F(SchedulerTest, ALongPromptsChunkIsCappedAndTheNextPromptTakesTheRest) {
  BlockManager blocks(32, 4, false);
  Scheduler scheduler({.max_batch_tokens = 16, .max_seqs = 4, .long_prefill_token_threshold = 6},
                      blocks, 64);
  Sequence* long_prompt = make(40);
  Sequence* short_prompt = make(5);
  add(scheduler, long_prompt);
  add(scheduler, short_prompt);
  const StepPlan plan = scheduler.schedule();
  ASSERT_EQ(plan.chunks.size(), 2u);
  EXPECT_EQ(find(plan.chunks[0].seq), long_prompt);
  EXPECT_EQ(plan.chunks[0].count, 6);
  EXPECT_EQ(find(plan.chunks[1].seq), short_prompt);
  EXPECT_EQ(plan.chunks[1].count, 5);
  complete(scheduler, plan);
  // A decode is one token, under any cap.
  const StepPlan next = scheduler.schedule();
  ASSERT_EQ(next.chunks.size(), 2u);
  EXPECT_EQ(next.chunks[0].count, 6);
  EXPECT_EQ(next.chunks[1].count, 1);
  // Without the cap the long prompt takes the whole budget and the short one waits.
  BlockManager more_blocks(32, 4, false);
  Scheduler uncapped({.max_batch_tokens = 16, .max_seqs = 4}, more_blocks, 64);
  add(uncapped, make(40));
  add(uncapped, make(5));
  const StepPlan whole = uncapped.schedule();
  ASSERT_EQ(whole.chunks.size(), 1u);
  EXPECT_EQ(whole.chunks[0].count, 16);
}

// The scheduler applies a step's progress itself: each planned sequence advances past its chunk
// and its full blocks become prefix-cache entries that the next identical prompt reuses.
TEST_F(SchedulerTest, UpdateFromOutputAdvancesTheSequencesAndCachesTheirFullBlocks) {
  BlockManager blocks(16, 4, true);
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4}, blocks, 64);
  Sequence* first = make(9);
  add(scheduler, first);
  const StepPlan plan = scheduler.schedule();
  ASSERT_EQ(plan.chunks.size(), 1u);
  EXPECT_EQ(plan.chunks[0].seq, first->seq);
  EXPECT_EQ(plan.chunks[0].request, first->id);
  EXPECT_EQ(scheduler.sequence(first->seq), first);
  scheduler.update_from_output(plan);
  EXPECT_EQ(first->computed, 9);
  // Same prompt, another request: two full blocks of four come from the cache.
  Sequence* again = make(9);
  again->tokens = first->tokens;
  scheduler.update_from_output({}, {.tokens = {{first->seq, 7}}});  // `first` decodes beside it
  add(scheduler, again);
  const StepPlan next = scheduler.schedule();
  ASSERT_EQ(next.chunks.size(), 2u);
  EXPECT_EQ(next.chunks[1].seq, again->seq);
  EXPECT_EQ(next.chunks[1].first, 8);
  EXPECT_EQ(again->cached_prompt_tokens, 8);
  const SeqId again_seq = again->seq;
  scheduler.remove(again_seq);
  EXPECT_EQ(scheduler.sequence(again_seq), nullptr);
}

// What sampling decided is applied in a fixed order: progress, predictions, forks (copies of
// their parent before this step's token), tokens, then the finished, whose blocks a fork still
// holds.
TEST_F(SchedulerTest, UpdateFromOutputForksBeforeTheTokensAndFinishesLast) {
  BlockManager blocks(16, 4, false);
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4}, blocks, 64);
  Sequence* parent = make(6);
  add(scheduler, parent);
  const StepPlan plan = scheduler.schedule();
  const SeqId parent_seq = parent->seq, child_seq = 100;
  const uint64_t request = parent->id;  // `parent` is gone once finished
  const int32_t free_before = blocks.available_blocks();
  scheduler.update_from_output(plan, {.predictions = {{parent_seq, 42.0}},
                                      .forks = {{parent_seq, child_seq}},
                                      .tokens = {{parent_seq, 5}, {child_seq, 9}},
                                      .finished = {parent_seq}});
  EXPECT_EQ(scheduler.sequence(parent_seq), nullptr);
  const Sequence* child = scheduler.sequence(child_seq);
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(child->id, request) << "a sample of the same request";
  EXPECT_EQ(child->computed, 6) << "the parent's progress, applied first";
  EXPECT_EQ(child->predicted_output, 42.0) << "the prediction, set before the fork";
  EXPECT_EQ(child->generated(), 1) << "its own token only";
  EXPECT_EQ(child->tokens.back(), 9);
  EXPECT_EQ(child->status, SequenceStatus::kRunning);
  EXPECT_EQ(blocks.available_blocks(), free_before) << "the child holds the parent's blocks";
  scheduler.remove(child_seq);
  EXPECT_EQ(blocks.available_blocks(), blocks.total_blocks());
}

TEST_F(SchedulerTest, ResultsThatNameAnEndedSequenceOrOutgrowTheContextAreInternalErrors) {
  BlockManager blocks(16, 4, false);
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4}, blocks, 8);
  Sequence* s = make(8);
  add(scheduler, s);
  const StepPlan plan = scheduler.schedule();
  try {
    scheduler.update_from_output(plan, {.tokens = {{s->seq, 5}}});
    FAIL() << "a ninth token went into a context of 8";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInternal);
    EXPECT_NE(std::string(e.what()).find("past the context of 8"), std::string::npos) << e.what();
  }
  try {
    scheduler.update_from_output({}, {.tokens = {{999, 5}}});
    FAIL() << "a token for an unknown sequence was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInternal);
  }
}

TEST_F(SchedulerTest, NewestRequestIsPreemptedWhenThePoolRunsDry) {
  BlockManager blocks(4, 4, false);  // 16 tokens in all
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4}, blocks, 64);
  Sequence* old_one = make(8);
  Sequence* new_one = make(8);
  add(scheduler, old_one);
  add(scheduler, new_one);
  complete(scheduler, scheduler.schedule());   // both prefilled: 2 blocks each, 8 tokens each now
  const StepPlan plan = scheduler.schedule();  // both need a third block: only one fits
  ASSERT_EQ(plan.preempted.size(), 1u);
  EXPECT_EQ(find(plan.preempted[0].seq), new_one);
  EXPECT_EQ(new_one->computed, 0) << "recomputed from scratch later";
  ASSERT_EQ(plan.chunks.size(), 1u);
  EXPECT_EQ(find(plan.chunks[0].seq), old_one);
  EXPECT_EQ(scheduler.preemption_count(), 1);
}

TEST_F(SchedulerTest, PromptThatCanNeverFitIsRejectedWithAReason) {
  BlockManager blocks(2, 4, false);
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4}, blocks, 64);
  Sequence* s = make(20);
  add(scheduler, s);
  const StepPlan plan = scheduler.schedule();
  ASSERT_EQ(plan.rejected.size(), 1u);
  EXPECT_NE(plan.rejected[0].reason.find("the context holds 8"), std::string::npos)
      << plan.rejected[0].reason;
}

TEST_F(SchedulerTest, HigherPriorityIsAdmittedFirstUnderThePriorityPolicy) {
  BlockManager blocks(32, 4, false);
  Scheduler scheduler(
      {.max_batch_tokens = 5, .max_seqs = 4, .scheduling_policy = SchedulingPolicy::kPriority},
      blocks, 64);
  Sequence* low = make(5, 0);
  Sequence* high = make(5, 3);
  add(scheduler, low);
  add(scheduler, high);
  const StepPlan plan = scheduler.schedule();
  ASSERT_EQ(plan.chunks.size(), 1u);
  EXPECT_EQ(find(plan.chunks[0].seq), high);
}

TEST_F(SchedulerTest, SequenceCapLimitsARunningBatch) {
  BlockManager blocks(32, 4, false);
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 2}, blocks, 64);
  for (int i = 0; i < 3; ++i) add(scheduler, make(2));
  EXPECT_EQ(scheduler.schedule().chunks.size(), 2u);
  EXPECT_EQ(scheduler.waiting_count(), 1u);
}

// Pipeline micro-batches: a step in flight holds its requests' sequences, so the next step takes
// the others, within its share of the token budget.
TEST_F(SchedulerTest, MicroBatchesTakeTheSequencesNoStepInFlightHolds) {
  BlockManager blocks(32, 4, false);
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 8}, blocks, 64);
  std::vector<Sequence*> all;
  for (int i = 0; i < 4; ++i) {
    all.push_back(make(3));
    add(scheduler, all.back());
  }
  StepLimits limits{.max_tokens = 6};  // two of the 3-token prompts
  const StepPlan first = scheduler.schedule(limits);
  ASSERT_EQ(first.chunks.size(), 2u);
  for (const ScheduledChunk& c : first.chunks) limits.busy.insert(c.request);
  const StepPlan second = scheduler.schedule(limits);
  ASSERT_EQ(second.chunks.size(), 2u);
  for (const ScheduledChunk& c : second.chunks) {
    EXPECT_FALSE(limits.busy.contains(c.request)) << "request " << c.request;
  }
  for (const ScheduledChunk& c : second.chunks) limits.busy.insert(c.request);
  EXPECT_TRUE(scheduler.schedule(limits).chunks.empty()) << "every request is in flight";
}

TEST_F(SchedulerTest, ASequenceInFlightIsNeverPreempted) {
  BlockManager blocks(4, 4, false);  // 16 tokens in all
  Scheduler scheduler({.max_batch_tokens = 64, .max_seqs = 4}, blocks, 64);
  Sequence* old_one = make(8);
  Sequence* new_one = make(8);
  add(scheduler, old_one);
  add(scheduler, new_one);
  complete(scheduler, scheduler.schedule());  // both prefilled: 2 blocks each
  // The newest one is in flight: the old one, needing a third block, gives way itself.
  const StepPlan plan = scheduler.schedule({.busy = {new_one->id}});
  ASSERT_EQ(plan.preempted.size(), 1u);
  EXPECT_EQ(find(plan.preempted[0].seq), old_one);
  EXPECT_TRUE(plan.chunks.empty())
      << find(plan.chunks[0].seq)->id << " " << plan.chunks[0].first << " " << plan.chunks[0].count;
  EXPECT_EQ(new_one->computed, 8);
}

}  // namespace
}  // namespace baton
