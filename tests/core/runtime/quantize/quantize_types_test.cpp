// f32 -> Q4_1, Q5_0, Q5_1, K-quant and Baton int8 / int4 / fp8 round trips through the reference
// dequantizer: every element within half a step of its block's stored scale unless it lies outside
// what the block can represent (clipped), overall RMS error bounds, exact cases and argument
// errors.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "baton/error.h"
#include "core/runtime/half.h"
#include "core/runtime/quantize/quantize.h"
#include "ops/reference.h"
#include "tests/ops/quant_affine.h"

namespace baton {
namespace {

std::vector<float> normal_row(int64_t n, uint32_t seed, float std) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, std);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  return x;
}

Tensor quantized(DType dtype, const std::vector<float>& x) {
  Tensor t = Tensor::host(dtype, {1, static_cast<int64_t>(x.size())});
  quantize_row(dtype, x.data(), t.materialize(), static_cast<int64_t>(x.size()));
  return t;
}

std::vector<float> dequantized(const Tensor& t) {
  std::vector<float> y(t.row_length());
  reference::dequantize_row(t, 0, y.data());
  return y;
}

struct Case {
  DType dtype;
  // RMS error over RMS value on normal data, about the uniform-quantization error (step /
  // sqrt(12), the step being a block's range over its levels) that the bits give; measured
  // 0.078, 0.043, 0.038 for Q4_1, Q5_0, Q5_1, 0.27, 0.15, 0.074, 0.037, 0.018 for Q2_K ..
  // Q6_K and 0.0097, 0.083, 0.100 for int8, int4_g32, int4_g128, bounded with ~15% margin.
  double rms_bound;
};

class QuantizeTypes : public ::testing::TestWithParam<Case> {};

// Each element x is stored as a code u of its block with value s * u + o; the quantizers round
// to the nearest code, so |x - value| <= |s| / 2 while x is inside [o, o + s * u_max] (either
// order), plus its distance outside that range otherwise, plus fp32 rounding.
TEST_P(QuantizeTypes, EveryElementIsWithinHalfAStoredStepOrClipped) {
  const DType dtype = GetParam().dtype;
  for (float std : {0.02f, 1.0f}) {
    const std::vector<float> x = normal_row(4096, 1, std);
    const Tensor t = quantized(dtype, x);
    const std::vector<float> y = dequantized(t);
    const std::vector<testing::AffineElement> a = testing::affine_elements(t, 0);
    for (size_t i = 0; i < x.size(); ++i) {
      const double lo = std::min(a[i].offset, a[i].offset + a[i].scale * a[i].code_max);
      const double hi = std::max(a[i].offset, a[i].offset + a[i].scale * a[i].code_max);
      const double clipped = std::max({0.0, lo - x[i], x[i] - hi});
      const double rounding = 1e-6 * (std::abs(x[i]) + std::abs(hi) + std::abs(lo));
      const double bound = std::abs(a[i].scale) / 2 + clipped + rounding;
      ASSERT_LE(std::abs(x[i] - y[i]), bound) << "element " << i << " of std " << std;
    }
  }
}

TEST_P(QuantizeTypes, RmsErrorIsWithinTheTypesBound) {
  const std::vector<float> x = normal_row(1 << 16, 2, 0.02f);
  const std::vector<float> y = dequantized(quantized(GetParam().dtype, x));
  double err = 0.0, sum = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    err += (double{x[i]} - y[i]) * (double{x[i]} - y[i]);
    sum += double{x[i]} * x[i];
  }
  EXPECT_LE(std::sqrt(err / sum), GetParam().rms_bound);
}

TEST_P(QuantizeTypes, AllZeroBlocksStayZero) {
  const std::vector<float> zeros(512, 0.0f);
  EXPECT_EQ(dequantized(quantized(GetParam().dtype, zeros)), zeros);
}

TEST_P(QuantizeTypes, RejectsPartialBlocks) {
  const int64_t block = traits(GetParam().dtype).block_size;
  const std::vector<float> x(block + 16, 1.0f);
  std::vector<std::byte> out(1024);
  try {
    quantize_row(GetParam().dtype, x.data(), out.data(), block + 16);
    FAIL() << "a partial block was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(std::to_string(block + 16)), std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Types, QuantizeTypes,
                         ::testing::Values(Case{DType::kQ4_1, 0.09}, Case{DType::kQ5_0, 0.05},
                                           Case{DType::kQ5_1, 0.045}, Case{DType::kQ2_K, 0.30},
                                           Case{DType::kQ3_K, 0.17}, Case{DType::kQ4_K, 0.085},
                                           Case{DType::kQ5_K, 0.045}, Case{DType::kQ6_K, 0.022},
                                           Case{DType::kI8Row, 0.0112}, Case{DType::kI4G32, 0.096},
                                           Case{DType::kI4G128, 0.115}),
                         [](const auto& info) { return std::string(to_string(info.param.dtype)); });

TEST(Quantize, Q4_1RepresentsAGridFromItsMinimumExactly) {
  std::vector<float> x(32);
  // min -1 and max 6.5 give d = 0.5 and m = -1, both exact in fp16.
  for (int i = 0; i < 32; ++i) x[i] = -1.0f + 0.5f * static_cast<float>(i % 16);
  EXPECT_EQ(dequantized(quantized(DType::kQ4_1, x)), x);
}

TEST(Quantize, Q5_0MapsTheSignedExtremeToMinusSixteen) {
  std::vector<float> x(32, 0.0f);
  x[0] = -4.0f;  // d = 0.25: code 0
  x[1] = 4.0f;   // +16 steps does not fit: clamps to code 31, +3.75
  x[20] = 1.5f;
  const std::vector<float> y = dequantized(quantized(DType::kQ5_0, x));
  EXPECT_EQ(y[0], -4.0f);
  EXPECT_EQ(y[1], 3.75f);
  EXPECT_EQ(y[20], 1.5f);
  EXPECT_EQ(y[5], 0.0f);
}

// Every group holds all 16 codes, in an order that differs per group, times its own step
// (0.5 for group 0, 0.25 for group 1, ...), so step 2^-(g+1) codes it exactly: swapped nibble
// halves, chunks or group scales would all show.
TEST(Quantize, Int4StoresGroupScalesThenChunksOfLowThenHighNibbles) {
  for (DType dtype : {DType::kI4G32, DType::kI4G128}) {
    SCOPED_TRACE(std::string(to_string(dtype)));
    const int64_t group = dtype == DType::kI4G32 ? 32 : 128;
    const auto code = [&](int64_t i) { return (i / 2 + 5 * (i / group)) % 16; };
    const auto step = [&](int64_t i) { return std::ldexp(1.0f, -static_cast<int>(i / group) - 1); };
    std::vector<float> x(256);
    for (int64_t i = 0; i < 256; ++i) x[i] = step(i) * static_cast<float>(code(i) - 8);
    const Tensor t = quantized(dtype, x);
    EXPECT_EQ(dequantized(t), x);
    const auto* bytes = reinterpret_cast<const uint8_t*>(t.materialize());
    const int64_t block = traits(dtype).block_size, per_block = block / group;
    for (int64_t b = 0; b < 256 / block; ++b) {
      const uint8_t* p = bytes + b * traits(dtype).block_bytes;
      for (int64_t g = 0; g < per_block; ++g) {
        uint16_t d;
        std::memcpy(&d, p + 2 * g, 2);
        EXPECT_EQ(fp16_to_fp32(d), step(b * block + g * group)) << "block " << b << " group " << g;
      }
      const uint8_t* quants = p + 2 * per_block;
      for (int64_t e = 0; e < block; ++e) {
        const int64_t chunk = e / 64, within = e % 64;
        const uint8_t byte = quants[32 * chunk + within % 32];
        const int nibble = within < 32 ? byte & 15 : byte >> 4;
        ASSERT_EQ(nibble, code(b * block + e)) << "block " << b << " element " << e;
      }
    }
  }
}

double relative_rms_error(DType dtype, const std::vector<float>& x) {
  const std::vector<float> y = dequantized(quantized(dtype, x));
  double err = 0.0, sum = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    err += (double{x[i]} - y[i]) * (double{x[i]} - y[i]);
    sum += double{x[i]} * x[i];
  }
  return std::sqrt(err / sum);
}

// int4_g32 holds what Q4_0 holds (4-bit codes, one fp16 scale per 32); its scale search must
// make it the more accurate of the two (measured 2.7% lower RMS error).
TEST(Quantize, Int4G32IsMoreAccurateThanQ4_0OnTheSameBits) {
  const std::vector<float> x = normal_row(1 << 16, 4, 0.02f);
  EXPECT_LT(relative_rms_error(DType::kI4G32, x), 0.99 * relative_rms_error(DType::kQ4_0, x));
}

TEST(Quantize, Int8MapsTheRowMaximumToPlusOrMinus127) {
  std::vector<float> x(64, 0.0f);
  x[3] = -2.54f;
  x[40] = 1.0f;
  const Tensor t = quantized(DType::kI8Row, x);
  float scale;
  std::memcpy(&scale, t.materialize(), sizeof(scale));
  EXPECT_FLOAT_EQ(scale, 0.02f);
  const auto* q = reinterpret_cast<const int8_t*>(t.materialize() + sizeof(scale));
  EXPECT_EQ(q[3], -127);
  EXPECT_EQ(q[40], 50);
  EXPECT_EQ(q[0], 0);
}

// FP8 is not a uniform grid: each element is within half an E4M3 step of x / scale, i.e.
// 2^-4 relative for normals and 2^-10 * scale below the smallest normal (2^-6).
TEST(Quantize, Fp8ElementsAreWithinHalfAnE4M3Step) {
  for (float std : {0.02f, 1.0f}) {
    const std::vector<float> x = normal_row(4096, 3, std);
    const Tensor t = quantized(DType::kF8Row, x);
    const std::vector<float> y = dequantized(t);
    float scale, amax = 0.0f;
    std::memcpy(&scale, t.materialize(), sizeof(scale));
    for (float v : x) amax = std::max(amax, std::abs(v));
    EXPECT_FLOAT_EQ(scale, amax / 448.0f);
    for (size_t i = 0; i < x.size(); ++i) {
      const double bound = std::max(std::abs(double{x[i]}) * 0x1p-4, scale * 0x1p-10) * 1.000001;
      ASSERT_LE(std::abs(double{x[i]} - y[i]), bound) << "element " << i << " of std " << std;
    }
  }
}

}  // namespace
}  // namespace baton
