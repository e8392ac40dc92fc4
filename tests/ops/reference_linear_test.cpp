// Reference matmul, embedding, get_rows and the LoRA update on hand-computed cases.

#include <gtest/gtest.h>

#include "baton/error.h"
#include "ops/reference.h"
#include "tests/ops/op_test_util.h"

namespace baton {
namespace {

using testing::f32_tensor;
using testing::i32_tensor;
using testing::values_of;

TEST(ReferenceMatMul, F32IsXTimesWeightTransposed) {
  Tensor x = f32_tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor w = f32_tensor({2, 3}, {1, 0, -1, 2, 1, 0});
  Tensor out = Tensor::host(DType::kF32, {2, 2});
  reference::matmul(x, w, out);
  EXPECT_EQ(values_of(out), (std::vector<float>{-2, 4, -2, 13}));
}

TEST(ReferenceMatMul, QuantizedWeightsDequantizeEachRow) {
  Tensor x = f32_tensor({1, 32}, std::vector<float>(32, 1.0f));
  Tensor q8 = Tensor::host(DType::kQ8_0, {2, 32});
  q8.data<BlockQ8_0>()[0].d = 0x3800;  // 0.5
  q8.data<BlockQ8_0>()[1].d = 0x3C00;  // 1.0
  for (int i = 0; i < 32; ++i) {
    q8.data<BlockQ8_0>()[0].qs[i] = static_cast<int8_t>(i - 16);
    q8.data<BlockQ8_0>()[1].qs[i] = 3;
  }
  Tensor out = Tensor::host(DType::kF32, {1, 2});
  reference::matmul(x, q8, out);
  EXPECT_EQ(values_of(out), (std::vector<float>{0.5f * -16, 96.0f}));

  Tensor q4 = Tensor::host(DType::kQ4_0, {1, 32});
  q4.data<BlockQ4_0>()[0].d = 0x3400;  // 0.25
  for (int j = 0; j < 16; ++j)
    q4.data<BlockQ4_0>()[0].qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  Tensor out4 = Tensor::host(DType::kF32, {1, 1});
  reference::matmul(x, q4, out4);
  EXPECT_EQ(values_of(out4)[0], 0.25f * (120 - 128) + 0.25f * (112 - 120));
}

TEST(ReferenceMatMul, RejectsMismatchedInnerDimension) {
  EXPECT_THROW(
      reference::matmul(Tensor::host(DType::kF32, {1, 3}), Tensor::host(DType::kF32, {2, 4}),
                        Tensor::host(DType::kF32, {1, 2})),
      Error);
}

TEST(ReferenceEmbedding, CopiesTheRowOfEachId) {
  Tensor table = f32_tensor({3, 2}, {0, 1, 10, 11, 20, 21});
  Tensor out = Tensor::host(DType::kF32, {3, 2});
  reference::embedding(table, i32_tensor({2, 0, 2}), out);
  EXPECT_EQ(values_of(out), (std::vector<float>{20, 21, 0, 1, 20, 21}));
}

TEST(ReferenceEmbedding, IdOutOfRangeIsAnErrorNamingTheId) {
  Tensor table = f32_tensor({3, 2}, {0, 1, 10, 11, 20, 21});
  Tensor out = Tensor::host(DType::kF32, {1, 2});
  try {
    reference::embedding(table, i32_tensor({3}), out);
    FAIL() << "id 3 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("id 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(reference::embedding(table, i32_tensor({-1}), out), Error);
}

TEST(ReferenceGetRows, GathersRowsInOrderAndRejectsBadRows) {
  Tensor x = f32_tensor({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor out = Tensor::host(DType::kF32, {3, 2});
  reference::get_rows(x, i32_tensor({2, 2, 0}), out);
  EXPECT_EQ(values_of(out), (std::vector<float>{5, 6, 5, 6, 1, 2}));
  EXPECT_THROW(reference::get_rows(x, i32_tensor({-1}), Tensor::host(DType::kF32, {1, 2})), Error);
}

TEST(ReferenceLora, AddsEachTokensAdapterUpdateAndLeavesBaseTokens) {
  // x [3, 2]; two slots of rank 1: a[0] = [1, 1], B[0] = [[2], [0]] (bt[0] = [[2, 0]]); a[1] =
  // [1, -1], B[1] = [[0], [3]]. Token 0 uses slot 1, token 1 none, token 2 slot 0.
  const Tensor y = f32_tensor({3, 2}, {10, 20, 30, 40, 50, 60});
  const Tensor x = f32_tensor({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor a = f32_tensor({2, 1, 2}, {1, 1, 1, -1});
  const Tensor bt = f32_tensor({2, 1, 2}, {2, 0, 0, 3});
  Tensor out = Tensor::host(DType::kF32, {3, 2});
  reference::lora(y, x, a, bt, i32_tensor({1, -1, 0}), out);
  // token 0: a[1]·x = -1, b[1]·(-1) = [0, -3]; token 2: a[0]·x = 11, b[0]·11 = [22, 0].
  EXPECT_EQ(values_of(out), (std::vector<float>{10, 17, 30, 40, 72, 60}));
  EXPECT_THROW(reference::lora(y, x, a, bt, i32_tensor({2, -1, 0}), out), Error);
}

}  // namespace
}  // namespace baton
