// CPU attention at every ISA level against the reference: prefill lengths that are not
// multiples of the query and KV tiles, head_dim 7, 64 and 128, MHA/GQA/MQA, several sequences
// with scattered block tables, chunked prefill on a cache that already holds earlier tokens,
// decode over contexts of 1 to 2000 positions (short, at and around the split length, long),
// f32, f16, bf16, q8_0, fp8 and int8 caches, soft-capped scores and sliding windows. run_cpu also
// checks that 1 and 2 threads agree bit for bit, which holds because the work split depends only on
// the batch.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

#include "ops/reference.h"
#include "tests/backends/cpu/attention_test_util.h"
#include "tests/backends/cpu/cpu_test_util.h"
#include "tests/backends/cpu/isa_test_util.h"

namespace baton {
namespace {

using testing::AttentionCase;

class CpuAttentionIsa : public ::testing::TestWithParam<std::tuple<cpu::Isa, AttentionCase>> {};

TEST_P(CpuAttentionIsa, MatchesReference) {
  const auto& [isa, c] = GetParam();
  const cpu::ScopedIsaOverride pin(isa);
  int64_t blocks_needed = 0;
  for (const testing::Sequence& s : c.seqs)
    blocks_needed += (s.cached + s.added + c.block_size - 1) / c.block_size;
  const int64_t n_blocks = blocks_needed + 2;
  auto batch = testing::make_batch(c, n_blocks);
  const int64_t n = static_cast<int64_t>(batch->token_pos.size());
  const Shape cache_shape = {n_blocks, c.block_size, c.kv_heads, c.head_dim};
  // Positions before each sequence's new tokens hold random "earlier" K/V; the new ones are
  // written first, so attention reads a cache exactly as a step would leave it.
  Tensor k_cache = testing::random_cache(c.cache_dtype, cache_shape, 91);
  Tensor v_cache = testing::random_cache(c.cache_dtype, cache_shape, 92);
  reference::kv_write(testing::random_f32({n, c.kv_heads, c.head_dim}, 93),
                      testing::random_f32({n, c.kv_heads, c.head_dim}, 94), k_cache, v_cache,
                      *batch);
  // Queries up to 3 make scores of several units, so the softmax is far from uniform.
  const Tensor q = testing::random_f32({n, c.heads, c.head_dim}, 95, -3.0f, 3.0f);
  const AttentionParams params{.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim)),
                               .softcap = c.softcap,
                               .window = c.window,
                               .batch = batch};
  Tensor ref = Tensor::host(DType::kF32, q.shape());
  reference::attention(q, k_cache, v_cache, params, ref);
  const Tensor out =
      testing::run_cpu([&](Graph& g) { return g.attention(q, k_cache, v_cache, params); });
  // fp32 scores, an online softmax over fp32 running sums (exp within 2 ulp, simd_exp.h) and
  // fp32 accumulation of up to 2000 weighted |v| < 1: observed errors stay below 1e-6.
  testing::expect_close(out, ref, 1e-5, 2e-6);
}

std::vector<AttentionCase> cases() {
  const DType f32 = DType::kF32, f16 = DType::kF16, q8_0 = DType::kQ8_0, fp8 = DType::kF8E4M3,
              bf16 = DType::kBF16, int8 = DType::kI8Scaled;
  std::vector<AttentionCase> out;
  for (int length : {1, 5, 17, 64, 300}) {
    out.push_back({"gqa_prefill_" + std::to_string(length), 8, 2, 64, 16, f32, {{0, length}}});
  }
  out.push_back({"mha_head_dim_7_prefill_17", 3, 3, 7, 5, f32, {{0, 17}}});
  out.push_back({"mqa_head_dim_128_f16_prefill_40", 4, 1, 128, 16, f16, {{0, 40}}});
  out.push_back({"gqa_three_prompts_f16", 8, 2, 64, 16, f16, {{0, 17}, {0, 5}, {0, 33}}});
  out.push_back({"chunked_prefill", 8, 2, 64, 16, f32, {{100, 37}, {31, 17}, {0, 3}}});
  out.push_back({"chunked_prefill_f16_mha", 4, 4, 64, 8, f16, {{45, 20}}});
  out.push_back(
      {"decode_short_contexts", 8, 2, 64, 16, f32, {{0, 1}, {1, 1}, {30, 1}, {255, 1}, {256, 1}}});
  out.push_back({"decode_split_contexts", 8, 2, 64, 16, f32, {{256, 1}, {511, 1}, {700, 1}}});
  out.push_back({"decode_long_f16", 4, 4, 128, 16, f16, {{1999, 1}}});
  out.push_back({"decode_long_mqa_head_dim_7", 4, 1, 7, 16, f32, {{1999, 1}}});
  out.push_back({"mixed_decode_and_prefill", 8, 2, 64, 16, f16, {{600, 1}, {0, 19}, {40, 1}}});
  out.push_back({"mixed_q8_0", 8, 2, 64, 16, q8_0, {{600, 1}, {0, 19}, {40, 1}}});
  out.push_back({"decode_long_q8_0", 4, 4, 128, 16, q8_0, {{1999, 1}}});
  out.push_back({"mixed_fp8_head_dim_7", 6, 2, 7, 16, fp8, {{300, 1}, {0, 19}}});
  out.push_back({"mixed_bf16_head_dim_7", 6, 2, 7, 16, bf16, {{300, 1}, {0, 19}}});
  out.push_back({"mixed_int8_head_dim_7", 6, 2, 7, 16, int8, {{300, 1}, {0, 19}}});
  // Gemma 2: a soft-cap small enough that tanh bends the scores, and sliding windows that start
  // inside a KV tile, span several, cover whole decode splits (which then add nothing) or hold
  // only the token itself.
  out.push_back({"softcap_prefill_300", 8, 2, 64, 16, f32, {{0, 300}}, 2.0f});
  out.push_back({"window_40_prefill_300", 8, 2, 64, 16, f32, {{0, 300}}, 0.0f, 40});
  out.push_back(
      {"window_20_chunked_prefill", 8, 2, 64, 16, f16, {{100, 37}, {31, 17}, {0, 3}}, 0.0f, 20});
  out.push_back({"window_100_decode_long_softcap", 4, 4, 128, 16, f32, {{1999, 1}}, 2.0f, 100});
  out.push_back({"window_256_decode_split_contexts",
                 8,
                 2,
                 64,
                 16,
                 f32,
                 {{255, 1}, {256, 1}, {511, 1}, {700, 1}},
                 0.0f,
                 256});
  out.push_back({"window_1_mixed", 8, 2, 64, 16, f32, {{600, 1}, {0, 19}}, 0.0f, 1});
  out.push_back(
      {"window_33_softcap_mixed_q8_0", 8, 2, 64, 16, q8_0, {{600, 1}, {0, 19}, {40, 1}}, 5.0f, 33});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, CpuAttentionIsa,
                         ::testing::Combine(::testing::ValuesIn(testing::supported_isas()),
                                            ::testing::ValuesIn(cases())),
                         [](const auto& info) {
                           return testing::isa_name(std::get<0>(info.param)) + "_" +
                                  std::get<1>(info.param).name;
                         });

}  // namespace
}  // namespace baton
