// FP8 E4M3 against a brute-force reference: the encoder must pick the code whose value is
// nearest in double precision (ties to the even code), saturate to +-448 and keep NaN.

#include "core/runtime/fp8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace baton {
namespace {

// The finite code nearest to x, ties to the even code; +-448 beyond the range.
uint8_t nearest_code(float x) {
  if (std::fabs(x) >= kFp8E4M3Max) return std::signbit(x) ? 0xFE : 0x7E;
  int best = -1;
  double best_distance = std::numeric_limits<double>::infinity();
  for (int code = 0; code < 256; ++code) {
    const float v = fp8_e4m3_to_fp32(static_cast<uint8_t>(code));
    if (std::isnan(v) || std::signbit(v) != std::signbit(x)) continue;
    const double distance = std::fabs(static_cast<double>(v) - static_cast<double>(x));
    if (distance < best_distance || (distance == best_distance && code % 2 == 0)) {
      best = code;
      best_distance = distance;
    }
  }
  return static_cast<uint8_t>(best);
}

TEST(Fp8E4M3, DecodesTheFormatsLandmarks) {
  EXPECT_EQ(fp8_e4m3_to_fp32(0x00), 0.0f);
  EXPECT_EQ(fp8_e4m3_to_fp32(0x01), 0x1p-9f);  // smallest subnormal
  EXPECT_EQ(fp8_e4m3_to_fp32(0x08), 0x1p-6f);  // smallest normal
  EXPECT_EQ(fp8_e4m3_to_fp32(0x38), 1.0f);
  EXPECT_EQ(fp8_e4m3_to_fp32(0x7E), 448.0f);
  EXPECT_EQ(fp8_e4m3_to_fp32(0xFE), -448.0f);
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_fp32(0x7F)));
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_fp32(0xFF)));
}

TEST(Fp8E4M3, EveryFiniteCodeRoundTrips) {
  for (int code = 0; code < 256; ++code) {
    const float v = fp8_e4m3_to_fp32(static_cast<uint8_t>(code));
    if (std::isnan(v)) continue;
    EXPECT_EQ(fp32_to_fp8_e4m3(v), code) << "value " << v;
  }
}

TEST(Fp8E4M3, EncodesToTheNearestCodeTiesToEven) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> log2_magnitude(-12.0, 10.0);
  for (int i = 0; i < 100000; ++i) {
    const float x = static_cast<float>((i % 2 ? -1.0 : 1.0) * std::exp2(log2_magnitude(rng)));
    ASSERT_EQ(fp32_to_fp8_e4m3(x), nearest_code(x)) << "x = " << x;
  }
  // Exact midpoints between neighbours: 1 + 1/16 lies between 1 (0x38) and 1.125 (0x39).
  EXPECT_EQ(fp32_to_fp8_e4m3(1.0625f), 0x38);
  EXPECT_EQ(fp32_to_fp8_e4m3(1.1875f), 0x3A);
  EXPECT_EQ(fp32_to_fp8_e4m3(0x1p-10f), 0x00);  // half the smallest subnormal: to even (zero)
  EXPECT_EQ(fp32_to_fp8_e4m3(0x3p-10f), 0x02);
}

TEST(Fp8E4M3, SaturatesAndKeepsNan) {
  EXPECT_EQ(fp32_to_fp8_e4m3(447.0f), 0x7E);
  EXPECT_EQ(fp32_to_fp8_e4m3(470.0f), 0x7E);  // would round to 480, which E4M3 cannot hold
  EXPECT_EQ(fp32_to_fp8_e4m3(1e9f), 0x7E);
  EXPECT_EQ(fp32_to_fp8_e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_fp32(fp32_to_fp8_e4m3(NAN))));
  EXPECT_EQ(fp32_to_fp8_e4m3(-0.0f), 0x80);
}

}  // namespace
}  // namespace baton
