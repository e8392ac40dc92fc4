// f32 -> f16/bf16/q8_0/q4_0 conversion: error bounds after a round trip through the reference
// dequantizer, exact cases, and the layouts ggml reads.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "baton/error.h"
#include "core/runtime/half.h"
#include "core/runtime/quantize/quantize.h"
#include "ops/reference.h"

namespace baton {
namespace {

std::vector<float> random_row(int64_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  return x;
}

// Quantizes `x` as one row of `dtype` and reads it back through the reference dequantizer.
std::vector<float> round_trip(DType dtype, const std::vector<float>& x, Tensor* stored = nullptr) {
  Tensor t = Tensor::host(dtype, {1, static_cast<int64_t>(x.size())});
  quantize_row(dtype, x.data(), t.materialize(), static_cast<int64_t>(x.size()));
  std::vector<float> out(x.size());
  reference::dequantize_row(t, 0, out.data());
  if (stored) *stored = t;
  return out;
}

TEST(Quantize, Q8_0ErrorIsAtMostHalfAStepPerElement) {
  const std::vector<float> x = random_row(1024, 1, 0.02f);
  const std::vector<float> y = round_trip(DType::kQ8_0, x);
  for (size_t b = 0; b < x.size() / kQK8_0; ++b) {
    float amax = 0;
    for (int i = 0; i < kQK8_0; ++i) amax = std::max(amax, std::fabs(x[b * kQK8_0 + i]));
    const float d = amax / 127.0f;
    // The scale is stored as fp16, which moves each value by up to 127 times its rounding.
    const float bound = d / 2 + 127 * std::fabs(d - fp16_to_fp32(fp32_to_fp16(d)));
    for (int i = 0; i < kQK8_0; ++i) {
      const size_t k = b * kQK8_0 + i;
      EXPECT_LE(std::fabs(x[k] - y[k]), bound) << "element " << k;
    }
  }
}

TEST(Quantize, Q8_0RepresentsScaledIntegersExactly) {
  std::vector<float> x(kQK8_0);
  // x[0] = -127 * 0.5 sets d = 0.5; every element is a multiple of it.
  for (int i = 0; i < kQK8_0; ++i) x[i] = 0.5f * static_cast<float>(i * 8 - 127);
  Tensor t;
  EXPECT_EQ(round_trip(DType::kQ8_0, x, &t), x);
  EXPECT_EQ(t.data<BlockQ8_0>()[0].d, fp32_to_fp16(0.5f));
  EXPECT_EQ(t.data<BlockQ8_0>()[0].qs[0], -127);
}

TEST(Quantize, Q4_0ErrorIsAtMostHalfAStepExceptTheClampedExtreme) {
  const std::vector<float> x = random_row(1024, 2, 1.0f);
  const std::vector<float> y = round_trip(DType::kQ4_0, x);
  for (size_t b = 0; b < x.size() / kQK4_0; ++b) {
    float max = 0;
    for (int i = 0; i < kQK4_0; ++i) {
      if (std::fabs(x[b * kQK4_0 + i]) > std::fabs(max)) max = x[b * kQK4_0 + i];
    }
    const float d = std::fabs(max / -8.0f);
    const float bound = d / 2 + 8 * std::fabs(d - std::fabs(fp16_to_fp32(fp32_to_fp16(d))));
    for (int i = 0; i < kQK4_0; ++i) {
      const size_t k = b * kQK4_0 + i;
      // Values beyond 7.5 steps on the side opposite the extreme clamp to +7 steps.
      const float clamped = std::max(0.0f, std::fabs(x[k]) - 7.5f * d);
      EXPECT_LE(std::fabs(x[k] - y[k]), bound + clamped) << "element " << k;
    }
  }
}

TEST(Quantize, Q4_0MapsTheSignedExtremeToMinusEightAndItsMirrorToSeven) {
  std::vector<float> x(kQK4_0, 0.0f);
  x[0] = -4.0f;  // the extreme: d = -4 / -8 = 0.5, q = 0
  x[1] = 4.0f;   // +8 steps does not fit a nibble: clamps to q = 15, i.e. +3.5
  x[17] = 1.5f;  // high nibble of qs[1]
  Tensor t;
  const std::vector<float> y = round_trip(DType::kQ4_0, x, &t);
  const BlockQ4_0& b = t.data<BlockQ4_0>()[0];
  EXPECT_EQ(b.d, fp32_to_fp16(0.5f));
  EXPECT_EQ(b.qs[0] & 0x0f, 0);
  EXPECT_EQ(b.qs[1], 15 | (8 + 3) << 4);
  EXPECT_EQ(y[0], -4.0f);
  EXPECT_EQ(y[1], 3.5f);
  EXPECT_EQ(y[17], 1.5f);
  EXPECT_EQ(y[5], 0.0f);
}

TEST(Quantize, AllZeroBlocksStayZero) {
  const std::vector<float> zeros(64, 0.0f);
  for (DType dtype : {DType::kQ8_0, DType::kQ4_0, DType::kF16, DType::kBF16}) {
    EXPECT_EQ(round_trip(dtype, zeros), zeros) << to_string(dtype);
  }
}

TEST(Quantize, HalfAndBfloat16RoundToNearestEven) {
  // 1 + 2^-11 is halfway between fp16 1 and 1 + 2^-10: ties go to the even (1).
  const std::vector<float> x = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, -2.0f, 1e6f, 0.1f};
  const std::vector<float> h = round_trip(DType::kF16, x);
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], 1.0f + 0x1p-9f);
  EXPECT_EQ(h[2], -2.0f);
  EXPECT_TRUE(std::isinf(h[3]));
  EXPECT_NEAR(h[4], 0.1f, 0.1f * 0x1p-11f);
  const std::vector<float> b = round_trip(DType::kBF16, x);
  EXPECT_EQ(b[0], 1.0f);
  EXPECT_EQ(b[2], -2.0f);
  EXPECT_NEAR(b[3], 1e6f, 1e6f * 0x1p-8f);
  EXPECT_NEAR(b[4], 0.1f, 0.1f * 0x1p-8f);
}

// The smallest fp16 subnormal is 2^-24: 2^-25 is the tie between it and zero (to even: zero),
// anything below rounds to zero, however tiny (values near 2^-38 once came back as NaN).
TEST(Quantize, HalfRoundsTinyValuesToZeroOrTheSmallestSubnormal) {
  EXPECT_EQ(fp32_to_fp16(0x1.8p-25f), 0x0001);
  EXPECT_EQ(fp32_to_fp16(0x1p-24f), 0x0001);
  EXPECT_EQ(fp32_to_fp16(-0x1.8p-24f), 0x8002);
  EXPECT_EQ(fp32_to_fp16(0x1p-25f), 0x0000);
  for (int e = 26; e <= 149; ++e) {
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.5f, -e)), 0x0000) << "1.5 * 2^-" << e;
    EXPECT_EQ(fp32_to_fp16(-std::ldexp(1.0f, -e)), 0x8000) << "-2^-" << e;
  }
}

TEST(Quantize, F32IsCopiedBitForBit) {
  const std::vector<float> x = random_row(7, 3, 1.0f);
  EXPECT_EQ(round_trip(DType::kF32, x), x);
}

TEST(Quantize, RejectsPartialBlocksAndUnsupportedDtypes) {
  std::vector<float> x(40, 1.0f);
  std::vector<std::byte> out(1024);
  try {
    quantize_row(DType::kQ8_0, x.data(), out.data(), 40);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("40"), std::string::npos) << e.what();
  }
  EXPECT_THROW(quantize_row(DType::kQ4_0, x.data(), out.data(), 40), Error);
  EXPECT_THROW(quantize_row(DType::kI32, x.data(), out.data(), 32), Error);
}

}  // namespace
}  // namespace baton
