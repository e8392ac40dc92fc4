// dequantize_row on hand-built rows of every weight dtype.

#include <gtest/gtest.h>

#include "baton/error.h"
#include "ops/reference.h"
#include "tests/ops/op_test_util.h"

namespace baton {
namespace {

TEST(DequantizeRow, Q8_0ScalesEachBlockByItsOwnD) {
  Tensor t = Tensor::host(DType::kQ8_0, {1, 64});
  BlockQ8_0* blocks = t.data<BlockQ8_0>();
  blocks[0].d = 0x3800;  // 0.5
  blocks[1].d = 0xC000;  // -2.0
  for (int i = 0; i < 32; ++i) {
    blocks[0].qs[i] = static_cast<int8_t>(i - 16);
    blocks[1].qs[i] = static_cast<int8_t>(i % 5);
  }
  std::vector<float> out(64);
  reference::dequantize_row(t, 0, out.data());
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(out[i], 0.5f * (i - 16)) << i;
    EXPECT_EQ(out[32 + i], -2.0f * (i % 5)) << i;
  }
}

TEST(DequantizeRow, Q4_0LowNibblesFirstThenHighNibbles) {
  Tensor t = Tensor::host(DType::kQ4_0, {2, 32});
  BlockQ4_0& b = t.data<BlockQ4_0>()[1];  // row 1; row 0 stays zero
  b.d = 0x3400;                           // 0.25
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  std::vector<float> out(32);
  reference::dequantize_row(t, 1, out.data());
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], 0.25f * (j - 8)) << j;       // low nibble of qs[j] = j
    EXPECT_EQ(out[16 + j], 0.25f * (7 - j)) << j;  // high nibble of qs[j] = 15 - j
  }
}

TEST(DequantizeRow, HalfAndBfloat16Rows) {
  Tensor f16 = Tensor::host(DType::kF16, {1, 3});
  const uint16_t f16_bits[] = {0x3C00, 0xC000, 0x3800};
  std::memcpy(f16.materialize(), f16_bits, sizeof(f16_bits));
  Tensor bf16 = Tensor::host(DType::kBF16, {1, 3});
  const uint16_t bf16_bits[] = {0x3F80, 0xC000, 0x3F00};
  std::memcpy(bf16.materialize(), bf16_bits, sizeof(bf16_bits));
  for (const Tensor& t : {f16, bf16}) {
    std::vector<float> out(3);
    reference::dequantize_row(t, 0, out.data());
    EXPECT_EQ(out, (std::vector<float>{1.0f, -2.0f, 0.5f})) << to_string(t.dtype());
  }
}

TEST(DequantizeRow, RejectsRowOutOfRangeAndNonWeightDtype) {
  std::vector<float> out(4);
  EXPECT_THROW(reference::dequantize_row(Tensor::host(DType::kF32, {2, 4}), 2, out.data()), Error);
  try {
    reference::dequantize_row(Tensor::host(DType::kI32, {1, 4}), 0, out.data());
    FAIL() << "i32 dequantised";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("i32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton
