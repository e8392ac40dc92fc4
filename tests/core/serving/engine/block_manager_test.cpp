#include "core/serving/engine/block_manager.h"

#include <gtest/gtest.h>

#include <numeric>

namespace baton {
namespace {

std::vector<int32_t> iota_tokens(int n, int first = 100) {
  std::vector<int32_t> t(n);
  std::iota(t.begin(), t.end(), first);
  return t;
}

TEST(BlockManager, GrowAllocatesWholeBlocksAndReleaseReturnsThem) {
  BlockManager blocks(5, 4, false);
  BlockTable a;
  ASSERT_TRUE(blocks.grow(a, 9));
  EXPECT_EQ(a.blocks.size(), 3u);
  EXPECT_FALSE(blocks.grow(a, 4 * 6)) << "more than the pool";
  EXPECT_EQ(a.blocks.size(), 3u) << "a failed grow changes nothing";
  blocks.release(a);
  EXPECT_EQ(blocks.available_blocks(), 5);
}

TEST(BlockManager, FullBlocksOfAFinishedSequenceServeTheSamePrefixLater) {
  BlockManager blocks(8, 4, true);
  const std::vector<int32_t> tokens = iota_tokens(14);  // 3 full blocks + 2 tokens
  BlockTable a;
  ASSERT_TRUE(blocks.grow(a, 14));
  blocks.cache_full_blocks(tokens, 14, 0, a);
  const std::vector<int32_t> first_blocks(a.blocks.begin(), a.blocks.begin() + 3);
  blocks.release(a);
  EXPECT_EQ(blocks.available_blocks(), 8) << "cached blocks stay available to new work";

  BlockTable b;
  EXPECT_EQ(blocks.reuse_prefix(tokens, 13, 0, b), 12);
  EXPECT_EQ(b.blocks, first_blocks);
  EXPECT_EQ(blocks.ref_count(b.blocks[0]), 1);
  EXPECT_EQ(blocks.prefix_hit_tokens(), 12);

  BlockTable other_adapter;
  EXPECT_EQ(blocks.reuse_prefix(tokens, 13, 7, other_adapter), 0) << "adapters change K/V";
  BlockTable different_start;
  std::vector<int32_t> changed = tokens;
  changed[0] = 1;
  EXPECT_EQ(blocks.reuse_prefix(changed, 13, 0, different_start), 0)
      << "equal later blocks do not match after a different first block";
}

TEST(BlockManager, UnreferencedCachedBlocksAreEvictedOldestFirstOnlyWhenNeeded) {
  BlockManager blocks(4, 2, true);
  const std::vector<int32_t> tokens = iota_tokens(6);
  BlockTable a;
  ASSERT_TRUE(blocks.grow(a, 6));
  blocks.cache_full_blocks(tokens, 6, 0, a);
  blocks.release(a);
  BlockTable b;
  ASSERT_TRUE(blocks.grow(b, 2));  // takes the one never-used block
  BlockTable probe;
  EXPECT_EQ(blocks.reuse_prefix(tokens, 6, 0, probe), 6) << "nothing evicted yet";
  blocks.release(probe);
  ASSERT_TRUE(blocks.grow(b, 4));  // must evict the least recently parked block
  BlockTable after;
  EXPECT_LT(blocks.reuse_prefix(tokens, 6, 0, after), 6);
}

TEST(BlockManager, SharedPartialBlockIsCopiedBeforeWriting) {
  BlockManager blocks(6, 4, false);
  BlockTable parent;
  ASSERT_TRUE(blocks.grow(parent, 6));
  BlockTable child = blocks.share(parent);
  EXPECT_EQ(blocks.ref_count(parent.blocks[1]), 2);
  const auto copy = blocks.make_writable(child, 1);
  ASSERT_TRUE(copy.has_value());
  EXPECT_EQ(copy->first, parent.blocks[1]);
  EXPECT_EQ(copy->second, child.blocks[1]);
  EXPECT_NE(child.blocks[1], parent.blocks[1]);
  EXPECT_EQ(blocks.ref_count(parent.blocks[1]), 1);
  EXPECT_FALSE(blocks.make_writable(parent, 1).has_value()) << "no longer shared";
  blocks.release(parent);
  blocks.release(child);
  EXPECT_EQ(blocks.available_blocks(), 6);
}

TEST(BlockManager, DisabledPrefixCachingNeverHits) {
  BlockManager blocks(4, 2, false);
  const std::vector<int32_t> tokens = iota_tokens(4);
  BlockTable a;
  ASSERT_TRUE(blocks.grow(a, 4));
  blocks.cache_full_blocks(tokens, 4, 0, a);
  blocks.release(a);
  BlockTable b;
  EXPECT_EQ(blocks.reuse_prefix(tokens, 4, 0, b), 0);
}

}  // namespace
}  // namespace baton
