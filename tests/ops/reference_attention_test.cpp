// Reference kv_write and attention through block tables on hand-computed cases.

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "baton/error.h"
#include "core/runtime/half.h"
#include "ops/reference.h"
#include "tests/ops/op_test_util.h"

namespace baton {
namespace {

using testing::f32_tensor;
using testing::values_of;

std::shared_ptr<PagedBatch> make_batch(int block_size, std::vector<int32_t> seq,
                                       std::vector<int32_t> pos,
                                       std::vector<std::vector<int32_t>> tables) {
  auto b = std::make_shared<PagedBatch>();
  b->block_size = block_size;
  b->token_seq = std::move(seq);
  b->token_pos = std::move(pos);
  b->block_tables = std::move(tables);
  return b;
}

TEST(ReferenceKvWrite, WritesEachTokenToTheRowItsBlockTableNames) {
  // block_size 2, table {3, 1}: positions 0, 1, 2, 3 land in rows 6, 7, 2, 3.
  auto batch = make_batch(2, {0, 0, 0, 0}, {0, 1, 2, 3}, {{3, 1}});
  Tensor k = f32_tensor({4, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor v = f32_tensor({4, 1, 2}, {-1, -2, -3, -4, -5, -6, -7, -8});
  for (DType dtype : {DType::kF32, DType::kF16}) {
    Tensor kc = Tensor::host(dtype, {4, 2, 1, 2});
    Tensor vc = Tensor::host(dtype, {4, 2, 1, 2});
    reference::kv_write(k, v, kc, vc, *batch);
    std::vector<float> kr(16), vr(16);
    for (int row = 0; row < 8; ++row) {
      reference::dequantize_row(kc.reshape({8, 2}), row, kr.data() + row * 2);
      reference::dequantize_row(vc.reshape({8, 2}), row, vr.data() + row * 2);
    }
    const std::vector<float> want_k = {0, 0, 0, 0, 5, 6, 7, 8, 0, 0, 0, 0, 1, 2, 3, 4};
    EXPECT_EQ(kr, want_k) << to_string(dtype);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(vr[i], -want_k[i]) << to_string(dtype) << " " << i;
  }
}

TEST(ReferenceKvWrite, PositionBeyondTheBlockTableIsAnError) {
  auto batch = make_batch(2, {0}, {4}, {{0, 1}});
  Tensor k = f32_tensor({1, 1, 1}, {1});
  Tensor kc = Tensor::host(DType::kF32, {2, 2, 1, 1});
  Tensor vc = Tensor::host(DType::kF32, {2, 2, 1, 1});
  try {
    reference::kv_write(k, k, kc, vc, *batch);
    FAIL() << "position 4 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("position 4"), std::string::npos) << e.what();
  }
  auto bad_block = make_batch(2, {0}, {0}, {{2}});
  EXPECT_THROW(reference::kv_write(k, k, kc, vc, *bad_block), Error);
}

TEST(ReferenceAttention, OnePositionReturnsItsValue) {
  auto batch = make_batch(2, {0}, {0}, {{1}});
  Tensor kc = Tensor::host(DType::kF32, {2, 2, 1, 2});
  Tensor vc = Tensor::host(DType::kF32, {2, 2, 1, 2});
  reference::kv_write(f32_tensor({1, 1, 2}, {0.3f, 0.7f}), f32_tensor({1, 1, 2}, {3, -1}), kc, vc,
                      *batch);
  Tensor out = Tensor::host(DType::kF32, {1, 1, 2});
  reference::attention(f32_tensor({1, 1, 2}, {1, 2}), kc, vc, {.scale = 0.5f, .batch = batch}, out);
  EXPECT_FLOAT_EQ(out.data<float>()[0], 3.0f);
  EXPECT_FLOAT_EQ(out.data<float>()[1], -1.0f);
}

TEST(ReferenceAttention, TwoPositionsAreCausalAndSoftmaxWeighted) {
  // block_size 1 with table {3, 0}: position 0 in row 3, position 1 in row 0.
  auto batch = make_batch(1, {0, 0}, {0, 1}, {{3, 0}});
  Tensor kc = Tensor::host(DType::kF32, {4, 1, 1, 2});
  Tensor vc = Tensor::host(DType::kF32, {4, 1, 1, 2});
  reference::kv_write(f32_tensor({2, 1, 2}, {1, 0, 0, 1}), f32_tensor({2, 1, 2}, {1, 2, 3, 4}), kc,
                      vc, *batch);
  Tensor out = Tensor::host(DType::kF32, {2, 1, 2});
  reference::attention(f32_tensor({2, 1, 2}, {1, 0, 1, 0}), kc, vc, {.scale = 1.0f, .batch = batch},
                       out);
  // Token 0 sees only v0. Token 1: scores (1, 0) give weights e/(1+e) and 1/(1+e).
  const double w0 = std::exp(1.0) / (1 + std::exp(1.0)), w1 = 1 - w0;
  const std::vector<float> got = values_of(out);
  EXPECT_FLOAT_EQ(got[0], 1.0f);
  EXPECT_FLOAT_EQ(got[1], 2.0f);
  EXPECT_FLOAT_EQ(got[2], static_cast<float>(w0 * 1 + w1 * 3));
  EXPECT_FLOAT_EQ(got[3], static_cast<float>(w0 * 2 + w1 * 4));
}

// Keys (1, 0), (0, 1), (1, 0) and values (1, 0), (2, 0), (3, 0) at positions 0-2; the first
// output element of q = (4, 0) at position 2 under `window` and `softcap`.
float last_of_three(int32_t window, float softcap) {
  auto written = make_batch(1, {0, 0, 0}, {0, 1, 2}, {{0, 1, 2}});
  Tensor kc = Tensor::host(DType::kF32, {3, 1, 1, 2});
  Tensor vc = Tensor::host(DType::kF32, {3, 1, 1, 2});
  reference::kv_write(f32_tensor({3, 1, 2}, {1, 0, 0, 1, 1, 0}),
                      f32_tensor({3, 1, 2}, {1, 0, 2, 0, 3, 0}), kc, vc, *written);
  Tensor out = Tensor::host(DType::kF32, {1, 1, 2});
  reference::attention(f32_tensor({1, 1, 2}, {4, 0}), kc, vc,
                       {.scale = 1.0f,
                        .softcap = softcap,
                        .window = window,
                        .batch = make_batch(1, {0}, {2}, {{0, 1, 2}})},
                       out);
  return out.data<float>()[0];
}

TEST(ReferenceAttention, SlidingWindowSeesOnlyTheLastPositions) {
  const double e4 = std::exp(4.0);
  EXPECT_FLOAT_EQ(last_of_three(0, 0.0f), static_cast<float>((e4 + 2 + 3 * e4) / (2 * e4 + 1)));
  EXPECT_FLOAT_EQ(last_of_three(3, 0.0f), last_of_three(0, 0.0f));
  EXPECT_FLOAT_EQ(last_of_three(2, 0.0f), static_cast<float>((2 + 3 * e4) / (1 + e4)));
  EXPECT_FLOAT_EQ(last_of_three(1, 0.0f), 3.0f);
}

TEST(ReferenceAttention, SoftcapBendsScoresBeforeTheSoftmax) {
  const double e = std::exp(2.0 * std::tanh(2.0));  // the capped score of 4 with cap 2
  EXPECT_FLOAT_EQ(last_of_three(0, 2.0f), static_cast<float>((e + 2 + 3 * e) / (2 * e + 1)));
  EXPECT_FLOAT_EQ(last_of_three(2, 2.0f), static_cast<float>((2 + 3 * e) / (1 + e)));
}

// One token at position 0 whose kv head j holds value 10 * (j + 1); returns each q head's output.
std::vector<float> grouped_heads(int heads, int kv_heads) {
  auto batch = make_batch(1, {0}, {0}, {{0}});
  Tensor kc = Tensor::host(DType::kF32, {1, 1, kv_heads, 1});
  Tensor vc = Tensor::host(DType::kF32, {1, 1, kv_heads, 1});
  for (int j = 0; j < kv_heads; ++j) vc.data<float>()[j] = 10.0f * (j + 1);
  Tensor out = Tensor::host(DType::kF32, {1, heads, 1});
  reference::attention(Tensor::host(DType::kF32, {1, heads, 1}), kc, vc,
                       {.scale = 1.0f, .batch = batch}, out);
  return values_of(out);
}

TEST(ReferenceAttention, GroupedQueryHeadsShareKvHeadsInOrder) {
  EXPECT_EQ(grouped_heads(4, 2), (std::vector<float>{10, 10, 20, 20}));
  EXPECT_EQ(grouped_heads(6, 3), (std::vector<float>{10, 10, 20, 20, 30, 30}));
}

TEST(ReferenceAttention, MultiQueryHeadsAllReadTheOneKvHead) {
  EXPECT_EQ(grouped_heads(3, 1), (std::vector<float>{10, 10, 10}));
}

TEST(ReferenceAttention, RejectsHeadsNotAMultipleOfKvHeads) {
  auto batch = make_batch(1, {0}, {0}, {{0}});
  Tensor kc = Tensor::host(DType::kF32, {1, 1, 2, 1});
  EXPECT_THROW(
      reference::attention(Tensor::host(DType::kF32, {1, 3, 1}), kc, kc,
                           {.scale = 1.0f, .batch = batch}, Tensor::host(DType::kF32, {1, 3, 1})),
      Error);
}

}  // namespace
}  // namespace baton
