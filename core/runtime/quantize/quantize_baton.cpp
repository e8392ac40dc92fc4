// Quantizers of Baton's own weight types (core/runtime/dtype.h): per-row int8 and FP8, group-wise
// int4.

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/runtime/fp8.h"
#include "core/runtime/half.h"
#include "core/runtime/quantize/quantize.h"
#include "core/runtime/quantize/quantize_detail.h"

namespace baton {
namespace {

using detail::check_blocks;
using detail::nearest;

float max_abs(const float* x, int64_t n) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  return amax;
}

// The int4 code of v: v rounded half to even and clamped to [-8, 7]. Adding and subtracting
// 1.5 * 2^23 rounds in the FPU's default mode without a libm call, which made the step search
// below several times faster; exact for the clamped range.
inline float int4_code(float v) {
  constexpr float kRound = 12582912.0f;
  if (std::isnan(v)) return 0.0f;
  return (std::clamp(v, -8.0f, 7.0f) + kRound) - kRound;
}

// Squared error of the group x[0, n) coded with step d (rounded to fp16, as stored), each
// element's weighted by x^2 as llama.cpp's make_qx_quants weighs them: errors on the large
// weights cost the model most. Against the plain squared error it measured lower perplexity on
// both bundled models (kjv-7m int4_g32 50.50 vs 50.58).
float weighted_int4_error(const float* x, int64_t n, float d) {
  const float step = fp16_to_fp32(fp32_to_fp16(d));
  const float inv = step != 0.0f ? 1.0f / step : 0.0f;
  float err = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float e = x[i] - step * int4_code(x[i] * inv);
    err += e * e * x[i] * x[i];
  }
  return err;
}

// The int4 step of one group. Codes run -8..7; as in Q4_0, the step takes the sign that maps
// the element of largest magnitude onto -8, which gains a level over a symmetric range. Smaller
// steps clip that element but code the many small weights more finely: steps from 4% above the
// full range down to 24% clipping are tried, each also refitted by least squares on its codes,
// and the one with the least weighted squared error is kept.
float int4_step(const float* x, int64_t n) {
  float amax = 0.0f, extreme = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      extreme = x[i];
    }
  }
  if (amax == 0.0f) return 0.0f;
  const float full = extreme / -8.0f;
  float best = full, best_err = weighted_int4_error(x, n, full);
  for (int i = -4; i <= 24; ++i) {
    const float d = full * (1.0f - 0.01f * static_cast<float>(i));
    const float inv = 1.0f / d;
    float xq = 0.0f, qq = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
      const float q = int4_code(x[j] * inv);
      xq += x[j] * q;
      qq += q * q;
    }
    for (const float candidate : {d, qq > 0.0f ? xq / qq : d}) {
      const float err = weighted_int4_error(x, n, candidate);
      if (err < best_err) best = candidate, best_err = err;
    }
  }
  return best;
}

}  // namespace

void quantize_row_int8(const float* x, std::byte* out, int64_t n) {
  check_blocks(n, traits(DType::kI8Row).block_size, "int8");
  quantize_row_int8_scaled(x, out, n);
}

void quantize_row_int8_scaled(const float* x, std::byte* out, int64_t n) {
  const float scale = max_abs(x, n) / 127.0f;
  const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
  std::memcpy(out, &scale, sizeof(scale));
  auto* q = reinterpret_cast<int8_t*>(out + sizeof(scale));
  for (int64_t i = 0; i < n; ++i) q[i] = static_cast<int8_t>(nearest(x[i] * inv, -127, 127));
}

void quantize_row_fp8(const float* x, std::byte* out, int64_t n) {
  check_blocks(n, traits(DType::kF8Row).block_size, "fp8");
  const float scale = max_abs(x, n) / kFp8E4M3Max;
  const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
  std::memcpy(out, &scale, sizeof(scale));
  auto* q = reinterpret_cast<uint8_t*>(out + sizeof(scale));
  for (int64_t i = 0; i < n; ++i) q[i] = fp32_to_fp8_e4m3(x[i] * inv);
}

void quantize_row_int4(DType dtype, const float* x, std::byte* out, int64_t n) {
  const DTypeTraits& t = traits(dtype);
  check_blocks(n, t.block_size, t.name.data());
  const int64_t group = int4_group_size(dtype), groups = int4_block_groups(dtype);
  constexpr int64_t kHalf = kInt4Chunk / 2;
  for (int64_t b = 0; b < n / t.block_size; ++b) {
    const float* v = x + b * t.block_size;
    auto* scales = reinterpret_cast<uint16_t*>(out + b * t.block_bytes);
    auto* quants = reinterpret_cast<uint8_t*>(scales + groups);
    std::memset(quants, 0, static_cast<size_t>(t.block_size / 2));
    for (int64_t g = 0; g < groups; ++g) {
      scales[g] = fp32_to_fp16(int4_step(v + g * group, group));
      const float step = fp16_to_fp32(scales[g]);
      const float inv = step != 0.0f ? 1.0f / step : 0.0f;
      for (int64_t o = g * group; o < (g + 1) * group; ++o) {
        const auto code = static_cast<uint8_t>(int4_code(v[o] * inv) + 8.0f);
        const bool high = o % kInt4Chunk >= kHalf;
        quants[o / kInt4Chunk * kHalf + o % kHalf] |= high ? static_cast<uint8_t>(code << 4) : code;
      }
    }
  }
}

}  // namespace baton
