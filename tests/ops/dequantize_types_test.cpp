// dequantize_row on hand-built blocks of Q4_1, Q5_0, Q5_1 and the K-quants: scales and codes
// chosen so that each layout rule (nibble order, fifth and high bits, packed 6-bit scales, signs)
// decides some elements, and the expected values worked out from the layouts in
// core/runtime/dtype.h.

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ops/reference.h"
#include "tests/ops/op_test_util.h"
#include "tests/ops/quant_affine.h"

namespace baton {
namespace {

constexpr uint16_t kHalfQuarter = 0x3400, kHalfHalf = 0x3800, kHalfOne = 0x3C00, kHalfTwo = 0x4000,
                   kHalfMinusOne = 0xBC00, kHalfEighth = 0x3000, kHalfSixteenth = 0x2C00;

std::vector<float> decode(const Tensor& t) {
  std::vector<float> out(t.row_length());
  reference::dequantize_row(t, 0, out.data());
  return out;
}

// Nibbles j | (15 - j) << 4: element j < 16 has code j, element 16 + j has code 15 - j.
void fill_nibbles(uint8_t* qs, int n) {
  for (int i = 0; i < n; ++i) qs[i] = static_cast<uint8_t>((i % 16) | (15 - i % 16) << 4);
}
int nibble_code(int j) {
  return j < 16 ? j : 15 - (j - 16);
}

// Fifth bits 0xFF, 0x00, 0x0F, 0xF0: elements 0..7, 16..19 and 28..31 have the bit.
constexpr uint8_t kQh[4] = {0xFF, 0x00, 0x0F, 0xF0};
int fifth_bit(int j) {
  return (j < 8 || (j >= 16 && j < 20) || j >= 28) ? 16 : 0;
}

TEST(DequantizeRow, Q4_1IsScaleTimesNibblePlusMin) {
  Tensor t = Tensor::host(DType::kQ4_1, {1, 32});
  BlockQ4_1& b = t.data<BlockQ4_1>()[0];
  b.d = kHalfHalf;
  b.m = kHalfMinusOne;
  fill_nibbles(b.qs, 16);
  const std::vector<float> out = decode(t);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(out[j], 0.5f * nibble_code(j) - 1.0f) << j;
}

TEST(DequantizeRow, Q5_0TakesTheFifthBitFromQhAndCentresOn16) {
  Tensor t = Tensor::host(DType::kQ5_0, {1, 32});
  BlockQ5_0& b = t.data<BlockQ5_0>()[0];
  b.d = kHalfQuarter;
  std::memcpy(b.qh, kQh, 4);
  fill_nibbles(b.qs, 16);
  const std::vector<float> out = decode(t);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(out[j], 0.25f * (nibble_code(j) + fifth_bit(j) - 16)) << j;
}

TEST(DequantizeRow, Q5_1IsScaleTimesFiveBitsPlusMin) {
  Tensor t = Tensor::host(DType::kQ5_1, {1, 32});
  BlockQ5_1& b = t.data<BlockQ5_1>()[0];
  b.d = kHalfEighth;
  b.m = kHalfTwo;
  std::memcpy(b.qh, kQh, 4);
  fill_nibbles(b.qs, 16);
  const std::vector<float> out = decode(t);
  for (int j = 0; j < 32; ++j)
    EXPECT_EQ(out[j], 0.125f * (nibble_code(j) + fifth_bit(j)) + 2.0f) << j;
}

// qs bytes 0xE4 hold bit pairs 0, 1, 2, 3 from the low end: element e's pair is (e % 128) / 32.
TEST(DequantizeRow, Q2_KUsesFourBitScalesAndMinsPerSixteen) {
  Tensor t = Tensor::host(DType::kQ2_K, {1, 256});
  BlockQ2_K& b = t.data<BlockQ2_K>()[0];
  for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<uint8_t>(j | (15 - j) << 4);
  std::memset(b.qs, 0xE4, sizeof(b.qs));
  b.d = kHalfQuarter;
  b.dmin = kHalfOne;
  const std::vector<float> out = decode(t);
  for (int e = 0; e < 256; ++e) {
    const int j = e / 16, q = (e % 128) / 32;
    EXPECT_EQ(out[e], 0.25f * j * q - 1.0f * (15 - j)) << e;
  }
}

// hmask bytes 0x55 give the third bit to the even 32-element chunks; scales are 4j - 32 (as in
// tests/core/runtime/dtype).
TEST(DequantizeRow, Q3_KSubtractsFourWithoutTheHighBit) {
  Tensor t = Tensor::host(DType::kQ3_K, {1, 256});
  BlockQ3_K& b = t.data<BlockQ3_K>()[0];
  const uint8_t scales[12] = {0x00, 0x44, 0x88, 0xCC, 0x00, 0x44,
                              0x88, 0xCC, 0xE4, 0xE4, 0xE4, 0xE4};
  std::memcpy(b.scales, scales, 12);
  std::memset(b.qs, 0xE4, sizeof(b.qs));
  std::memset(b.hmask, 0x55, sizeof(b.hmask));
  b.d = kHalfHalf;
  const std::vector<float> out = decode(t);
  const int codes[8] = {0, -3, 2, -1, 0, -3, 2, -1};  // per chunk e / 32: pair + 4 * bit - 4
  for (int e = 0; e < 256; ++e) EXPECT_EQ(out[e], 0.5f * (4 * (e / 16) - 32) * codes[e / 32]) << e;
}

// The scales and mins of tests/core/runtime/dtype: 1, 2, 3, 4, 17, 34, 51, 63 and 0, 1, 2, 3, 16,
// 33, 48, 62.
constexpr uint8_t kK4Scales[12] = {0x41, 0x82, 0xC3, 0xC4, 0x40, 0x81,
                                   0xC2, 0xC3, 0x01, 0x12, 0x03, 0xEF};
constexpr int kK4Scale[8] = {1, 2, 3, 4, 17, 34, 51, 63};
constexpr int kK4Min[8] = {0, 1, 2, 3, 16, 33, 48, 62};

// Sub-block s is the low (even s) or high nibbles of qs[32 * (s / 2) ..].
TEST(DequantizeRow, Q4_KAlternatesNibblesPerSubBlock) {
  Tensor t = Tensor::host(DType::kQ4_K, {1, 256});
  BlockQ4_K& b = t.data<BlockQ4_K>()[0];
  b.d = kHalfOne;
  b.dmin = kHalfHalf;
  std::memcpy(b.scales, kK4Scales, 12);
  fill_nibbles(b.qs, 128);
  const std::vector<float> out = decode(t);
  for (int e = 0; e < 256; ++e) {
    const int s = e / 32, l = e % 32;
    const int q = s % 2 == 0 ? l % 16 : 15 - l % 16;
    EXPECT_EQ(out[e], 1.0f * kK4Scale[s] * q - 0.5f * kK4Min[s]) << e;
  }
}

// qh bytes 0xA5 give the fifth bit to sub-blocks 0, 2, 5 and 7.
TEST(DequantizeRow, Q5_KAddsBitSOfQhToSubBlockS) {
  Tensor t = Tensor::host(DType::kQ5_K, {1, 256});
  BlockQ5_K& b = t.data<BlockQ5_K>()[0];
  b.d = kHalfOne;
  b.dmin = kHalfHalf;
  std::memcpy(b.scales, kK4Scales, 12);
  fill_nibbles(b.qs, 128);
  std::memset(b.qh, 0xA5, sizeof(b.qh));
  const std::vector<float> out = decode(t);
  for (int e = 0; e < 256; ++e) {
    const int s = e / 32, l = e % 32;
    const int q = (s % 2 == 0 ? l % 16 : 15 - l % 16) + ((0xA5 >> s) & 1) * 16;
    EXPECT_EQ(out[e], 1.0f * kK4Scale[s] * q - 0.5f * kK4Min[s]) << e;
  }
}

// Within each half of 128, elements 0..63 take low nibbles and 64..127 high nibbles of
// ql[0..63]; qh bytes 0xE4 make the two high bits (k % 128) / 32.
TEST(DequantizeRow, Q6_KCombinesNibblesAndHighPairsWithInt8Scales) {
  Tensor t = Tensor::host(DType::kQ6_K, {2, 256});
  BlockQ6_K& b = t.data<BlockQ6_K>()[1];  // row 1; row 0 stays zero
  const int8_t scales[16] = {-128, -1, 0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 127, -64, -7};
  std::memcpy(b.scales, scales, 16);
  fill_nibbles(b.ql, 128);
  std::memset(b.qh, 0xE4, sizeof(b.qh));
  b.d = kHalfSixteenth;
  std::vector<float> out(256);
  reference::dequantize_row(t, 1, out.data());
  for (int e = 0; e < 256; ++e) {
    const int k = e % 128, i = k % 64;
    const int low = k < 64 ? i % 16 : 15 - i % 16;
    const int q = low + 16 * (k / 32) - 32;
    EXPECT_EQ(out[e], 0.0625f * scales[e / 16] * q) << e;
  }
}

// The tests' own layout reading (quant_affine.h), which the quantize and matmul tests rely on,
// agrees with the reference decoder on random blocks of every type.
TEST(DequantizeRow, AffineReadingMatchesTheReferenceOnRandomBlocks) {
  for (DType dtype : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1,
                      DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K,
                      DType::kI8Row, DType::kI4G32, DType::kI4G128}) {
    SCOPED_TRACE(std::string(to_string(dtype)));
    const Tensor w = testing::random_weight(dtype, {3, 512}, 7);
    std::vector<float> out(512);
    for (int64_t r = 0; r < 3; ++r) {
      reference::dequantize_row(w, r, out.data());
      const std::vector<testing::AffineElement> a = testing::affine_elements(w, r);
      for (int64_t i = 0; i < 512; ++i) {
        ASSERT_LE(a[i].code, a[i].code_max);
        // The decoders round each value to fp32 once or twice.
        const double expected = a[i].scale * a[i].code + a[i].offset;
        ASSERT_NEAR(out[i], expected,
                    1e-6 * (std::abs(a[i].scale * a[i].code) + std::abs(a[i].offset)))
            << "row " << r << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace baton
