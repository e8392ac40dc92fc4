#pragma once

// FP8 E4M3 (the OCP "E4M3FN" encoding used by vLLM's and PyTorch's float8_e4m3fn): sign, 4
// exponent bits with bias 7, 3 mantissa bits, subnormals, no infinities; 0x7F/0xFF are NaN and
// the largest finite value is 448. Encoding rounds to nearest even and saturates to +-448, as
// vLLM's KV-cache kernels do, so a large value never becomes NaN.

#include <array>
#include <cmath>
#include <cstdint>

namespace baton {

constexpr float kFp8E4M3Max = 448.0f;

inline uint8_t fp32_to_fp8_e4m3(float value) {
  const uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
  const float a = std::fabs(value);
  if (std::isnan(value)) return sign | 0x7F;
  if (a >= kFp8E4M3Max) return sign | 0x7E;
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e with f in [0.5, 1)
  // Subnormals (below 2^-6) are multiples of 2^-9; normals have 3 mantissa bits below the
  // leading one, so a step of 2^(e-1-3). nearbyint rounds half to even in the default mode.
  const int step_exponent = a < 0x1p-6f ? -9 : e - 4;
  const float steps = std::nearbyint(std::ldexp(a, -step_exponent));
  const float rounded = std::ldexp(steps, step_exponent);
  if (rounded >= kFp8E4M3Max) return sign | 0x7E;
  if (rounded < 0x1p-6f) return sign | static_cast<uint8_t>(steps);  // subnormal or zero
  int re = 0;
  const float f = std::frexp(rounded, &re);  // rounded = f * 2^re, 1.m = 2f
  const auto mantissa = static_cast<uint8_t>(std::lround((2.0f * f - 1.0f) * 8.0f));
  return sign | static_cast<uint8_t>((re - 1 + 7) << 3) | mantissa;
}

// All 256 codes decoded, for kernels that convert by table lookup.
inline const std::array<float, 256>& fp8_e4m3_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int code = 0; code < 256; ++code) {
      const int exponent = (code >> 3) & 15, mantissa = code & 7;
      float v;
      if (exponent == 15 && mantissa == 7) {
        v = NAN;
      } else if (exponent == 0) {
        v = std::ldexp(static_cast<float>(mantissa), -9);
      } else {
        v = std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
      }
      t[code] = (code & 0x80) ? -v : v;
    }
    return t;
  }();
  return table;
}

inline float fp8_e4m3_to_fp32(uint8_t code) {
  return fp8_e4m3_table()[code];
}

}  // namespace baton
