#include "core/serving/kv_cache/block_allocator.h"

#include <gtest/gtest.h>

#include <set>

#include "baton/error.h"

namespace baton {
namespace {

TEST(BlockAllocator, HandsOutEveryBlockOnceThenRunsDry) {
  BlockAllocator blocks(4);
  std::set<int32_t> got;
  for (int i = 0; i < 4; ++i) got.insert(*blocks.allocate());
  EXPECT_EQ(got, (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_FALSE(blocks.allocate().has_value());
  EXPECT_EQ(blocks.free_count(), 0);
}

TEST(BlockAllocator, SharedBlockIsFreedByItsLastHolder) {
  BlockAllocator blocks(2);
  const int32_t b = *blocks.allocate();
  blocks.retain(b);
  EXPECT_EQ(blocks.ref_count(b), 2);
  blocks.release(b);
  EXPECT_EQ(blocks.free_count(), 1);
  blocks.release(b);
  EXPECT_EQ(blocks.free_count(), 2);
  EXPECT_THROW(blocks.release(b), Error) << "releasing a free block is a bug, not a no-op";
}

TEST(BlockAllocator, RejectsAnEmptyPool) {
  EXPECT_THROW(BlockAllocator(0), Error);
}

}  // namespace
}  // namespace baton
