#include "core/kv_cache/paged_kv_cache.h"

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"

namespace baton {
namespace {

class PagedKvCacheTest : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> backend = make_cpu_backend(BackendOptions{.threads = 1});
  KvCacheShape shape{.n_layers = 2, .n_kv_heads = 2, .head_dim = 4, .block_size = 4, .n_blocks = 5};
};

TEST_F(PagedKvCacheTest, PoolsHaveOneBlockedTensorPerLayer) {
  PagedKvCache cache(shape, *backend);
  EXPECT_EQ(cache.keys(1).shape(), (Shape{5, 4, 2, 4}));
  EXPECT_EQ(cache.values(0).shape(), (Shape{5, 4, 2, 4}));
  EXPECT_EQ(cache.bytes_per_token(), 2u * 4 * 2 * 2 * 4);
}

TEST_F(PagedKvCacheTest, ReserveGrowsBlockTablesAndReleaseReturnsEveryBlock) {
  PagedKvCache cache(shape, *backend);
  SequenceBlocks a, b;
  ASSERT_TRUE(cache.reserve(a, 9));  // 3 blocks
  EXPECT_EQ(a.block_table.size(), 3u);
  ASSERT_TRUE(cache.reserve(a, 12));  // still 3
  EXPECT_EQ(a.block_table.size(), 3u);
  ASSERT_TRUE(cache.reserve(b, 8));
  EXPECT_EQ(cache.blocks().free_count(), 0);
  EXPECT_FALSE(cache.reserve(a, 13)) << "the pool is exhausted";
  EXPECT_EQ(a.block_table.size(), 3u) << "a failed reserve changes nothing";
  cache.release(a);
  cache.release(b);
  EXPECT_EQ(cache.blocks().free_count(), 5);
  EXPECT_TRUE(a.block_table.empty());
}

}  // namespace
}  // namespace baton
