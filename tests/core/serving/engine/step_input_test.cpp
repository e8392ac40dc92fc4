#include "core/serving/engine/step_input.h"

#include <gtest/gtest.h>

#include "tests/core/serving/engine/scheduler_fixture.h"

namespace baton {
namespace {

class StepInputTest : public testing::SchedulerFixture {};

// Chunks flatten in plan order, each token with its sequence's index and position, and a logit
// row only where a chunk reaches its sequence's last token.
TEST_F(StepInputTest, ChunksFlattenWithTheirPositionsAndLogitRows) {
  BlockManager blocks(16, 4, false);
  Scheduler scheduler({.max_batch_tokens = 6, .max_seqs = 4}, blocks, 64);
  Sequence* a = make(3);
  Sequence* b = make(5);
  add(scheduler, a);
  add(scheduler, b);
  const StepPlan plan = scheduler.schedule();  // a whole, 3 of b's 5
  const StepInput input = build_step_input(plan, scheduler, 4, 64, nullptr);
  EXPECT_EQ(input.tokens, (std::vector<int32_t>{1000, 1001, 1002, 2000, 2001, 2002}));
  EXPECT_EQ(input.logit_rows, std::vector<int32_t>{2});
  EXPECT_EQ(input.layout->token_seq, (std::vector<int32_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(input.layout->token_pos, (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(input.layout->block_tables.size(), 2u);
  EXPECT_EQ(input.context_size, 64);
  EXPECT_EQ(input.lora, nullptr) << "no chunk is adapted";
}

}  // namespace
}  // namespace baton
