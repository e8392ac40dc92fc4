#pragma once

// Helpers for op tests: tensors from literals, seeded random tensors of every dtype, and
// element-wise comparisons that report where two tensors differ.

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/runtime/dtype.h"
#include "core/runtime/half.h"
#include "core/runtime/op.h"
#include "core/runtime/quantize/quantize.h"
#include "core/runtime/tensor.h"

namespace baton {

// Lets GoogleTest print dtype parameters by name.
inline void PrintTo(DType dtype, std::ostream* os) {
  *os << to_string(dtype);
}

}  // namespace baton

namespace baton::testing {

// RopeParams without designated initialisers, which GCC's -Wextra flags when freq_factors is
// left out.
inline RopeParams rope_params(int n_rot, RopeMode mode = RopeMode::kNormal,
                              float freq_base = 10000.0f, float freq_scale = 1.0f) {
  RopeParams p;
  p.n_rot = n_rot;
  p.mode = mode;
  p.freq_base = freq_base;
  p.freq_scale = freq_scale;
  return p;
}

inline Tensor f32_tensor(Shape shape, const std::vector<float>& values) {
  Tensor t = Tensor::host(DType::kF32, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  std::memcpy(t.materialize(), values.data(), t.nbytes());
  return t;
}

inline Tensor i32_tensor(const std::vector<int32_t>& values) {
  Tensor t = Tensor::host(DType::kI32, {static_cast<int64_t>(values.size())});
  std::memcpy(t.materialize(), values.data(), t.nbytes());
  return t;
}

inline std::vector<float> values_of(const Tensor& t) {
  return {t.data<float>(), t.data<float>() + t.numel()};
}

inline Tensor copy_of(const Tensor& t) {
  Tensor out = Tensor::host(t.dtype(), t.shape());
  std::memcpy(out.materialize(), t.materialize(), t.nbytes());
  return out;
}

// Uniform floats in [lo, hi).
inline Tensor random_f32(Shape shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  Tensor t = Tensor::host(DType::kF32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

inline Tensor random_i32(int64_t n, int32_t limit, uint32_t seed) {
  Tensor t = Tensor::host(DType::kI32, {n});
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(0, limit - 1);
  for (int32_t& v : t.span<int32_t>()) v = dist(rng);
  return t;
}

// An fp16 field of a block: its byte offset and the range its random value is drawn from.
struct HalfField {
  size_t offset;
  float lo, hi;
};

// The fp16 scale fields of the other quantized types, with ranges that keep values of magnitude
// up to about 1 (2 at most) whatever the random codes and sub-block scales.
inline std::vector<HalfField> half_fields(DType dtype) {
  switch (dtype) {
    case DType::kQ4_1:
      return {{offsetof(BlockQ4_1, d), 0.02f, 0.12f}, {offsetof(BlockQ4_1, m), -1.0f, 0.0f}};
    case DType::kQ5_0:
      return {{offsetof(BlockQ5_0, d), 0.01f, 0.06f}};
    case DType::kQ5_1:
      return {{offsetof(BlockQ5_1, d), 0.01f, 0.06f}, {offsetof(BlockQ5_1, m), -1.0f, 0.0f}};
    case DType::kQ2_K:
      return {{offsetof(BlockQ2_K, d), 0.01f, 0.04f}, {offsetof(BlockQ2_K, dmin), 0.01f, 0.06f}};
    case DType::kQ3_K:
      return {{offsetof(BlockQ3_K, d), 0.003f, 0.008f}};
    case DType::kQ4_K:
      return {{offsetof(BlockQ4_K, d), 0.0005f, 0.002f},
              {offsetof(BlockQ4_K, dmin), 0.005f, 0.015f}};
    case DType::kQ5_K:
      return {{offsetof(BlockQ5_K, d), 0.0003f, 0.001f},
              {offsetof(BlockQ5_K, dmin), 0.005f, 0.015f}};
    case DType::kQ6_K:
      return {{offsetof(BlockQ6_K, d), 0.0001f, 0.0003f}};
    default:
      return {};
  }
}

// A weight of any supported dtype with values of magnitude up to about 1. Quantized blocks get
// random quants and a random positive scale, so every quant value is exercised; the other
// quantized types get random bytes (codes and sub-block scales) and fp16 fields from
// half_fields.
inline Tensor random_weight(DType dtype, Shape shape, uint32_t seed) {
  Tensor t = Tensor::host(dtype, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const int64_t n = t.numel();
  switch (dtype) {
    case DType::kF32:
      for (float& v : t.span<float>()) v = unit(rng);
      break;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) t.data<uint16_t>()[i] = fp32_to_fp16(unit(rng));
      break;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) t.data<uint16_t>()[i] = fp32_to_bf16(unit(rng));
      break;
    case DType::kQ8_0: {
      std::uniform_real_distribution<float> scale(0.001f, 0.008f);
      std::uniform_int_distribution<int> quant(-128, 127);
      for (int64_t b = 0; b < n / kQK8_0; ++b) {
        BlockQ8_0& block = t.data<BlockQ8_0>()[b];
        block.d = fp32_to_fp16(scale(rng));
        for (int8_t& q : block.qs) q = static_cast<int8_t>(quant(rng));
      }
      break;
    }
    case DType::kQ4_0: {
      std::uniform_real_distribution<float> scale(0.02f, 0.12f);
      std::uniform_int_distribution<int> byte(0, 255);
      for (int64_t b = 0; b < n / kQK4_0; ++b) {
        BlockQ4_0& block = t.data<BlockQ4_0>()[b];
        block.d = fp32_to_fp16(scale(rng));
        for (uint8_t& q : block.qs) q = static_cast<uint8_t>(byte(rng));
      }
      break;
    }
    case DType::kI8Row:
    case DType::kI4G32:
    case DType::kI4G128:
    case DType::kF8Row: {
      // Quantized from random rows: no other way gives valid FP8 codes and per-row scales.
      std::vector<float> row(static_cast<size_t>(t.row_length()));
      for (int64_t r = 0; r < t.rows(); ++r) {
        for (float& v : row) v = 0.1f * unit(rng);
        quantize_row(dtype, row.data(), t.materialize() + r * t.row_bytes(), t.row_length());
      }
      break;
    }
    default: {
      const std::vector<HalfField> fields = half_fields(dtype);
      if (fields.empty()) {
        ADD_FAILURE() << "random_weight: no generator for " << to_string(dtype);
        break;
      }
      std::uniform_int_distribution<int> byte(0, 255);
      for (std::byte& b : std::span(t.materialize(), t.nbytes()))
        b = static_cast<std::byte>(byte(rng));
      const size_t block_bytes = traits(dtype).block_bytes;
      for (size_t b = 0; b < t.nbytes() / block_bytes; ++b) {
        for (const HalfField& f : fields) {
          std::uniform_real_distribution<float> value(f.lo, f.hi);
          const uint16_t h = fp32_to_fp16(value(rng));
          std::memcpy(t.materialize() + b * block_bytes + f.offset, &h, sizeof(h));
        }
      }
    }
  }
  return t;
}

// Expects |actual - expected| <= atol + rtol * |expected| for every element of two f32 tensors.
inline void expect_close(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  ASSERT_EQ(actual.shape(), expected.shape());
  ASSERT_EQ(actual.dtype(), DType::kF32);
  ASSERT_EQ(expected.dtype(), DType::kF32);
  int reported = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.data<float>()[i], e = expected.data<float>()[i];
    if (std::abs(a - e) <= atol + rtol * std::abs(e)) continue;
    ADD_FAILURE() << "element " << i << " of " << to_string(actual.shape()) << ": got " << a
                  << ", expected " << e << " (diff " << std::abs(a - e) << ")";
    if (++reported == 5) return;
  }
}

// Expects two tensors of any dtype to hold the same bytes.
inline void expect_identical(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  const size_t bytes = a.nbytes();
  size_t first_diff = bytes;
  for (size_t i = 0; i < bytes && first_diff == bytes; ++i) {
    if (a.materialize()[i] != b.materialize()[i]) first_diff = i;
  }
  EXPECT_EQ(first_diff, bytes) << "tensors " << to_string(a.shape()) << " of "
                               << to_string(a.dtype()) << " differ first at byte " << first_diff;
}

}  // namespace baton::testing
