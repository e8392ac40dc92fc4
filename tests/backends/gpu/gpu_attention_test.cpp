// GPU kv_write and attention against the reference on token-flattened batches with shuffled
// block tables: MHA, GQA (groups that do and do not fill a kernel block) and MQA; prefill,
// prefill chunks after cached context, decode (with contexts long enough to be split into
// several chunks and merged) and mixes of them; f32 and f16 caches; head sizes up to 256.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/reference.h"
#include "tests/backends/cpu/attention_test_util.h"
#include "tests/backends/gpu/gpu_test_util.h"

namespace baton {
namespace {

using testing::AttentionCase;
using testing::BackendParamTest;
using testing::BackendTest;
using testing::copy_of;
using testing::expect_close;
using testing::expect_identical;
using testing::GpuOnlyTest;
using testing::make_batch;
using testing::random_cache;
using testing::random_f32;
using testing::Sequence;

class GpuAttention : public BackendParamTest<AttentionCase> {};

TEST_P(GpuAttention, KvWriteAndAttentionMatchReference) {
  const AttentionCase& c = GetParam();
  int64_t blocks_needed = 0;
  for (const Sequence& s : c.seqs) {
    blocks_needed += (s.cached + s.added + c.block_size - 1) / c.block_size;
  }
  const int64_t n_blocks = blocks_needed + 3;  // spare blocks hold noise that is never read
  auto batch = make_batch(c, n_blocks);
  const int64_t n = static_cast<int64_t>(batch->token_pos.size());
  const Shape cache_shape = {n_blocks, c.block_size, c.kv_heads, c.head_dim};
  const Tensor k_cache0 = random_cache(c.cache_dtype, cache_shape, 62);
  const Tensor v_cache0 = random_cache(c.cache_dtype, cache_shape, 63);
  const Tensor q = random_f32({n, c.heads, c.head_dim}, 64);
  const Tensor k = random_f32({n, c.kv_heads, c.head_dim}, 65);
  const Tensor v = random_f32({n, c.kv_heads, c.head_dim}, 66);
  const AttentionParams params{.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim)),
                               .batch = batch};

  Tensor ref_k = copy_of(k_cache0), ref_v = copy_of(v_cache0);
  reference::kv_write(k, v, ref_k, ref_v, *batch);
  Tensor ref_out = Tensor::host(DType::kF32, q.shape());
  reference::attention(q, ref_k, ref_v, params, ref_out);

  const Tensor gpu_k = device(k_cache0), gpu_v = device(v_cache0);
  const Tensor out = run([&](Graph& g) {
    g.kv_write(device(k), device(v), gpu_k, gpu_v, batch);
    return g.attention(device(q), gpu_k, gpu_v, params);
  });
  // The write is a copy (f32) or the same round-to-nearest-even (f16): bit-identical.
  expect_identical(host(gpu_k), ref_k);
  expect_identical(host(gpu_v), ref_v);
  // fp32 dots over head_dim, an fp32 online softmax and fp32 sums of up to ~1500 weighted
  // values with |v| < 1, against double: errors of a few 1e-7 on outputs that are weighted
  // means (magnitude ~ 1/sqrt(context)); 2e-5 absolute leaves room for the split-K merge's
  // extra rescaling while a wrong mask, block or head (errors ~1e-2 and up) still fails.
  expect_close(out, ref_out, 1e-5, 2e-5);
}

std::vector<AttentionCase> attention_cases() {
  return {
      {"mha_prefill", 4, 4, 16, 4, DType::kF32, {{0, 11}}},
      {"mha_prefill_many_tiles", 2, 2, 64, 16, DType::kF32, {{0, 70}}},
      {"gqa_prefill_two_seqs", 8, 4, 32, 16, DType::kF32, {{0, 20}, {0, 7}}},
      {"gqa_group3_prefill_chunk", 6, 2, 48, 8, DType::kF32, {{37, 17}}},
      {"mqa_decode_four_seqs", 8, 1, 24, 8, DType::kF32, {{5, 1}, {17, 1}, {0, 1}, {40, 1}}},
      {"gqa_mixed_decode_prefill_chunk", 8, 4, 40, 16, DType::kF32, {{33, 1}, {0, 13}, {16, 5}}},
      {"gqa_mixed_f16_cache", 8, 4, 40, 16, DType::kF16, {{33, 1}, {0, 13}, {16, 5}}},
      {"mqa_prefill_f16_cache", 6, 1, 64, 8, DType::kF16, {{0, 9}, {3, 4}}},
      {"mqa_24_heads_two_block_groups", 24, 1, 32, 16, DType::kF32, {{0, 5}, {20, 1}}},
      {"odd_head_dim_block_3", 6, 2, 7, 3, DType::kF32, {{2, 3}, {10, 1}, {0, 1}}},
      {"head_dim_128", 8, 2, 128, 16, DType::kF16, {{100, 1}, {0, 19}}},
      {"head_dim_256", 4, 2, 256, 16, DType::kF32, {{40, 1}, {0, 9}}},
      {"decode_chunk_edges", 4, 2, 64, 16, DType::kF32, {{255, 1}, {256, 1}, {511, 1}, {0, 1}}},
      {"long_decode_split", 8, 2, 64, 16, DType::kF16, {{1500, 1}, {129, 1}, {700, 1}}},
      {"long_prefill_chunk", 4, 4, 64, 32, DType::kF32, {{600, 12}}},
  };
}

INSTANTIATE_TEST_SUITE_P(Batches, GpuAttention, ::testing::ValuesIn(attention_cases()),
                         [](const auto& info) { return info.param.name; });

TEST_F(BackendTest, BlockIdOutsideTheCacheIsAnErrorNamingTheNode) {
  auto batch = std::make_shared<PagedBatch>();
  batch->block_size = 2;
  batch->token_seq = {0};
  batch->token_pos = {0};
  batch->block_tables = {{5}};
  const Tensor cache = device(Tensor::host(DType::kF32, {4, 2, 1, 8}));
  Graph g = testing::graph_on(backend());
  g.attention(device(random_f32({1, 2, 8}, 1)), cache, cache, {.scale = 1.0f, .batch = batch},
              "blk3.attn");
  try {
    backend().execute(g);
    FAIL() << "block 5 of 4 accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("blk3.attn"), std::string::npos) << message;
    EXPECT_NE(message.find("block 5"), std::string::npos) << message;
  }
}

TEST_F(GpuOnlyTest, HeadDimAboveTheKernelLimitIsUnsupported) {
  auto batch = std::make_shared<PagedBatch>();
  batch->token_seq = {0};
  batch->token_pos = {0};
  batch->block_tables = {{0}};
  const Tensor cache = device(Tensor::host(DType::kF32, {1, 16, 1, 512}));
  Graph g = testing::graph_on(backend());
  g.attention(device(random_f32({1, 1, 512}, 1)), cache, cache, {.scale = 1.0f, .batch = batch});
  EXPECT_FALSE(backend().supports(g.nodes()[0]));
  EXPECT_THROW(backend().execute(g), Error);
}

}  // namespace
}  // namespace baton
