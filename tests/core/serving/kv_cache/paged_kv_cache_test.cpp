#include "core/serving/kv_cache/paged_kv_cache.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

#include "backends/cpu/cpu_backend.h"
#include "baton/error.h"

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

TEST_F(PagedKvCacheTest, SmallerDtypesShrinkEachToken) {
  shape.head_dim = 64;
  shape.dtype = DType::kF16;
  PagedKvCache f16(shape, *backend);
  EXPECT_EQ(f16.keys(0).dtype(), DType::kF16);
  EXPECT_EQ(f16.bytes_per_token(), 2u * 2 * 2 * 64 * 2);
  shape.dtype = DType::kQ8_0;
  PagedKvCache q8_0(shape, *backend);
  EXPECT_EQ(q8_0.values(1).dtype(), DType::kQ8_0);
  EXPECT_EQ(q8_0.bytes_per_token(), 2u * 2 * 2 * 2 * sizeof(BlockQ8_0));  // two blocks a head
}

// kv_cache_dtype's names (baton/option_values.h) are the cache dtypes' own, one to one.
TEST(KvCacheDtype, EveryOptionValueIsTheCacheDtypeOfItsNameAndQ8_0NeedsWholeBlocksPerHead) {
  std::set<DType> seen;
  for (const auto& entry : OptionEnum<KvCacheType>::names) {
    const DType dtype = kv_cache_dtype(entry.value);
    EXPECT_EQ(to_string(dtype), std::string_view(entry.name));
    EXPECT_TRUE(is_kv_cache_dtype(dtype)) << entry.name;
    seen.insert(dtype);
  }
  EXPECT_EQ(seen.size(), std::size(kKvCacheDtypes));
  EXPECT_NO_THROW(check_kv_cache_dtype(DType::kI8Scaled, 8));  // a scale per head: any size
  EXPECT_NO_THROW(check_kv_cache_dtype(DType::kF8E4M3, 7));    // one byte a value: any head size
  EXPECT_NO_THROW(check_kv_cache_dtype(DType::kQ8_0, 128));
  try {
    check_kv_cache_dtype(DType::kQ8_0, 8);
    ADD_FAILURE() << "head size 8 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("multiple of 32; this model's is 8"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(check_kv_cache_dtype(DType::kQ4_0, 64), Error);
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
