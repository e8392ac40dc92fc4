// CPU kv_write and attention against the reference on token-flattened batches: MHA, GQA and
// MQA; prefill, decode and mixed batches of several sequences whose block tables are shuffled
// (non-contiguous) and whose lengths differ; f32, f16, bf16, q8_0, fp8 and int8 caches.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "baton/error.h"
#include "ops/reference.h"
#include "tests/backends/cpu/attention_test_util.h"
#include "tests/backends/cpu/cpu_test_util.h"

namespace baton {
namespace {

using testing::AttentionCase;
using testing::copy_of;
using testing::expect_close;
using testing::expect_identical;
using testing::make_batch;
using testing::random_cache;
using testing::random_f32;
using testing::Sequence;

class CpuAttention : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(CpuAttention, KvWriteAndAttentionMatchReference) {
  const AttentionCase& c = GetParam();
  int64_t blocks_needed = 0;
  for (const Sequence& s : c.seqs)
    blocks_needed += (s.cached + s.added + c.block_size - 1) / c.block_size;
  const int64_t n_blocks = blocks_needed + 3;  // spare blocks stay unused
  auto batch = make_batch(c, n_blocks);
  const int64_t n = static_cast<int64_t>(batch->token_pos.size());
  const Shape cache_shape = {n_blocks, c.block_size, c.kv_heads, c.head_dim};
  const Tensor k_cache0 = random_cache(c.cache_dtype, cache_shape, 62);
  const Tensor v_cache0 = random_cache(c.cache_dtype, cache_shape, 63);
  Tensor q = random_f32({n, c.heads, c.head_dim}, 64);
  Tensor k = random_f32({n, c.kv_heads, c.head_dim}, 65);
  Tensor v = random_f32({n, c.kv_heads, c.head_dim}, 66);
  const AttentionParams params{.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim)),
                               .batch = batch};

  Tensor ref_k = copy_of(k_cache0), ref_v = copy_of(v_cache0);
  reference::kv_write(k, v, ref_k, ref_v, *batch);
  Tensor ref_out = Tensor::host(DType::kF32, q.shape());
  reference::attention(q, ref_k, ref_v, params, ref_out);

  Tensor cpu_k, cpu_v;
  Tensor out = testing::run_cpu([&](Graph& g) {
    cpu_k = copy_of(k_cache0);
    cpu_v = copy_of(v_cache0);
    g.kv_write(k, v, cpu_k, cpu_v, batch);
    return g.attention(q, cpu_k, cpu_v, params);
  });
  // The cache write is a copy (f32) or the same encoder (the other types): bit-identical.
  expect_identical(cpu_k, ref_k);
  expect_identical(cpu_v, ref_v);
  // f32 math on f32 or decoded K/V (both sides decode the same bytes to the same floats): fp32 dots
  // over head_dim and an fp32 softmax with |v| < 1 (observed at most 1 ulp, 6e-8).
  expect_close(out, ref_out, 1e-5, 2e-6);
}

std::vector<AttentionCase> attention_cases() {
  std::vector<AttentionCase> cases = {
      {"mha_prefill", 4, 4, 16, 4, DType::kF32, {{0, 11}}},
      {"gqa_prefill_two_seqs", 8, 4, 32, 16, DType::kF32, {{0, 20}, {0, 7}}},
      {"mqa_decode_four_seqs", 8, 1, 24, 8, DType::kF32, {{5, 1}, {17, 1}, {0, 1}, {40, 1}}},
      {"gqa_mixed_decode_prefill_chunk", 8, 4, 40, 16, DType::kF32, {{33, 1}, {0, 13}, {16, 5}}},
      {"gqa_mixed_f16_cache", 8, 4, 40, 16, DType::kF16, {{33, 1}, {0, 13}, {16, 5}}},
      {"mqa_prefill_f16_cache", 6, 1, 64, 8, DType::kF16, {{0, 9}, {3, 4}}},
      {"gqa_mixed_q8_0_cache", 8, 4, 64, 16, DType::kQ8_0, {{33, 1}, {0, 13}, {16, 5}}},
      {"mqa_decode_q8_0_cache", 4, 1, 32, 8, DType::kQ8_0, {{40, 1}, {0, 9}}},
      {"gqa_mixed_fp8_cache", 8, 4, 40, 16, DType::kF8E4M3, {{33, 1}, {0, 13}, {16, 5}}},
      {"gqa_mixed_bf16_cache", 8, 4, 40, 16, DType::kBF16, {{33, 1}, {0, 13}, {16, 5}}},
      {"gqa_mixed_int8_cache", 8, 4, 40, 16, DType::kI8Scaled, {{33, 1}, {0, 13}, {16, 5}}},
      {"odd_head_dim_block_3", 6, 2, 7, 3, DType::kF32, {{2, 3}, {10, 1}, {0, 1}}},
      {"long_decode", 4, 2, 64, 16, DType::kF32, {{300, 1}, {129, 1}}},
  };
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Batches, CpuAttention, ::testing::ValuesIn(attention_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(CpuAttentionErrors, BlockIdOutsideTheCacheIsAnErrorNamingTheNode) {
  std::unique_ptr<Backend> backend = make_cpu_backend({.threads = 2});
  Graph g = testing::graph_on(*backend);
  auto batch = std::make_shared<PagedBatch>();
  batch->block_size = 2;
  batch->token_seq = {0};
  batch->token_pos = {0};
  batch->block_tables = {{5}};
  Tensor cache = Tensor::host(DType::kF32, {4, 2, 1, 8});
  g.attention(random_f32({1, 2, 8}, 1), cache, cache, {.scale = 1.0f, .batch = batch}, "blk3.attn");
  try {
    backend->execute(g);
    FAIL() << "block 5 of 4 accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("blk3.attn"), std::string::npos) << message;
    EXPECT_NE(message.find("block 5"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace baton
