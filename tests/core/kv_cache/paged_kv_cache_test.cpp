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

TEST_F(PagedKvCacheTest, CopyBlockCopiesKeysAndValuesOfEveryLayer) {
  PagedKvCache cache(shape, *backend);
  const int64_t per_block = 4 * 2 * 4;
  for (int32_t layer = 0; layer < shape.n_layers; ++layer) {
    for (const Tensor* t : {&cache.keys(layer), &cache.values(layer)}) {
      float* block1 = t->data<float>() + per_block;
      for (int64_t i = 0; i < per_block; ++i) block1[i] = static_cast<float>(layer * 1000 + i);
    }
  }
  cache.copy_block(1, 3, *backend);
  for (int32_t layer = 0; layer < shape.n_layers; ++layer) {
    for (const Tensor* t : {&cache.keys(layer), &cache.values(layer)}) {
      const float* block3 = t->data<float>() + 3 * per_block;
      for (int64_t i = 0; i < per_block; ++i) {
        ASSERT_EQ(block3[i], static_cast<float>(layer * 1000 + i));
      }
    }
  }
}

}  // namespace
}  // namespace baton
