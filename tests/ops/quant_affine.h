#pragma once

// The tests' own reading of the block-quantized layouts: every element of a row as an unsigned
// code u and the affine map its block applies, value = scale * u + offset (before the fp32
// rounding of the decoders). Written independently of ops/ and backends/ from the layouts in
// core/runtime/dtype.h; dequantize tests check it against the reference decoder, and the quantize
// and matmul tests use it for their error bounds.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/runtime/dtype.h"
#include "core/runtime/half.h"
#include "core/runtime/tensor.h"

namespace baton::testing {

struct AffineElement {
  double scale = 0.0, offset = 0.0;
  int code = 0, code_max = 0;  // code in [0, code_max]
};

namespace detail {

inline int legacy_code(const uint8_t* qs, const uint8_t* qh, int j) {
  int q = j < 16 ? qs[j] & 15 : qs[j - 16] >> 4;
  if (qh) q |= ((qh[j / 8] >> (j % 8)) & 1) << 4;
  return q;
}

inline int two_bits(const uint8_t* qs, int e) {
  return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

// Scale and min of sub-block s of Q4_K / Q5_K.
inline void k4(const uint8_t* p, int s, int& scale, int& min) {
  scale = s < 4 ? p[s] & 63 : (p[s + 4] & 15) | (p[s - 4] >> 6) << 4;
  min = s < 4 ? p[s + 4] & 63 : (p[s + 4] >> 4) | (p[s] >> 6) << 4;
}

}  // namespace detail

inline std::vector<AffineElement> affine_elements(const Tensor& t, int64_t row) {
  const int64_t n = t.row_length();
  const std::byte* p = t.materialize() + t.row_bytes() * static_cast<size_t>(row);
  std::vector<AffineElement> out(n);
  auto h = [](uint16_t v) { return double{fp16_to_fp32(v)}; };
  for (int64_t i = 0; i < n; ++i) {
    AffineElement& a = out[i];
    const int j = static_cast<int>(i % 32), e = static_cast<int>(i % 256);
    switch (t.dtype()) {
      case DType::kQ8_0: {
        const auto& b = reinterpret_cast<const BlockQ8_0*>(p)[i / 32];
        a = {h(b.d), -128 * h(b.d), b.qs[j] + 128, 255};
        break;
      }
      case DType::kQ4_0: {
        const auto& b = reinterpret_cast<const BlockQ4_0*>(p)[i / 32];
        a = {h(b.d), -8 * h(b.d), detail::legacy_code(b.qs, nullptr, j), 15};
        break;
      }
      case DType::kQ4_1: {
        const auto& b = reinterpret_cast<const BlockQ4_1*>(p)[i / 32];
        a = {h(b.d), h(b.m), detail::legacy_code(b.qs, nullptr, j), 15};
        break;
      }
      case DType::kQ5_0: {
        const auto& b = reinterpret_cast<const BlockQ5_0*>(p)[i / 32];
        a = {h(b.d), -16 * h(b.d), detail::legacy_code(b.qs, b.qh, j), 31};
        break;
      }
      case DType::kQ5_1: {
        const auto& b = reinterpret_cast<const BlockQ5_1*>(p)[i / 32];
        a = {h(b.d), h(b.m), detail::legacy_code(b.qs, b.qh, j), 31};
        break;
      }
      case DType::kQ2_K: {
        const auto& b = reinterpret_cast<const BlockQ2_K*>(p)[i / 256];
        const uint8_t sm = b.scales[e / 16];
        a = {h(b.d) * (sm & 15), -h(b.dmin) * (sm >> 4), detail::two_bits(b.qs, e), 3};
        break;
      }
      case DType::kQ3_K: {
        const auto& b = reinterpret_cast<const BlockQ3_K*>(p)[i / 256];
        const int s = e / 16;
        const int low = s < 8 ? b.scales[s] & 15 : b.scales[s - 8] >> 4;
        const int top = (b.scales[8 + s % 4] >> (2 * (s / 4))) & 3;
        const double scale = h(b.d) * ((low | top << 4) - 32);
        const int high = (b.hmask[e % 32] >> (e / 32)) & 1;
        a = {scale, -4 * scale, detail::two_bits(b.qs, e) | high << 2, 7};
        break;
      }
      case DType::kQ4_K:
      case DType::kQ5_K: {
        const bool five = t.dtype() == DType::kQ5_K;
        const std::byte* block = p + (i / 256) * (five ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K));
        uint16_t d, dmin;
        std::memcpy(&d, block, 2);
        std::memcpy(&dmin, block + 2, 2);
        const auto* scales = reinterpret_cast<const uint8_t*>(block + 4);
        const auto* qs = scales + 12 + (five ? 32 : 0);
        const int s = e / 32;
        int scale, min;
        detail::k4(scales, s, scale, min);
        int q = (qs[32 * (s / 2) + e % 32] >> (4 * (s % 2))) & 15;
        if (five) q |= ((scales[12 + e % 32] >> s) & 1) << 4;
        a = {h(d) * scale, -h(dmin) * min, q, five ? 31 : 15};
        break;
      }
      case DType::kQ6_K: {
        const auto& b = reinterpret_cast<const BlockQ6_K*>(p)[i / 256];
        const int half = e / 128, k = e % 128;
        const int low = (b.ql[64 * half + k % 64] >> (4 * (k / 64))) & 15;
        const int high = (b.qh[32 * half + k % 32] >> (2 * (k / 32))) & 3;
        const double scale = h(b.d) * b.scales[e / 16];
        a = {scale, -32 * scale, low | high << 4, 63};
        break;
      }
      case DType::kI8Row: {
        float scale;
        std::memcpy(&scale, p, sizeof(scale));
        const auto q = static_cast<int8_t>(p[sizeof(scale) + i]);
        a = {scale, -128.0 * scale, q + 128, 255};
        break;
      }
      case DType::kI4G32:
      case DType::kI4G128: {
        // Blocks of 64 (two groups of 32) or 128 (one group): scales, then chunks of 32 bytes
        // with elements 0..31 in the low nibbles and 32..63 in the high ones.
        const bool g32 = t.dtype() == DType::kI4G32;
        const int64_t block = g32 ? 64 : 128, block_bytes = g32 ? 36 : 66, groups = g32 ? 2 : 1;
        const std::byte* b = p + (i / block) * block_bytes;
        const int64_t o = i % block;
        uint16_t d;
        std::memcpy(&d, b + 2 * (g32 ? o / 32 : 0), 2);
        const auto byte = static_cast<uint8_t>(b[2 * groups + 32 * (o / 64) + o % 32]);
        a = {h(d), -8 * h(d), o % 64 < 32 ? byte & 15 : byte >> 4, 15};
        break;
      }
      default:
        ADD_FAILURE() << "affine_elements: no reading of " << to_string(t.dtype());
    }
  }
  return out;
}

}  // namespace baton::testing
