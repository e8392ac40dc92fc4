#include "core/runtime/quantize/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "baton/error.h"
#include "core/runtime/half.h"
#include "core/runtime/quantize/quantize_detail.h"

namespace baton {

using detail::check_blocks;

void detail::check_blocks(int64_t n, int64_t block, const char* type) {
  if (n < 0 || n % block != 0) {
    throw Error(ErrorCategory::kInvalidArgument, "cannot quantize " + std::to_string(n) +
                                                     " values to " + type + ": not a multiple of " +
                                                     std::to_string(block));
  }
}

void quantize_row_q8_0(const float* x, BlockQ8_0* out, int64_t n) {
  check_blocks(n, kQK8_0, "q8_0");
  for (int64_t b = 0; b < n / kQK8_0; ++b) {
    const float* v = x + b * kQK8_0;
    float amax = 0.0f;
    for (int64_t i = 0; i < kQK8_0; ++i) amax = std::max(amax, std::fabs(v[i]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    out[b].d = fp32_to_fp16(d);
    for (int64_t i = 0; i < kQK8_0; ++i) out[b].qs[i] = static_cast<int8_t>(std::round(v[i] * id));
  }
}

void quantize_row_q4_0(const float* x, BlockQ4_0* out, int64_t n) {
  check_blocks(n, kQK4_0, "q4_0");
  constexpr int64_t kHalf = kQK4_0 / 2;
  for (int64_t b = 0; b < n / kQK4_0; ++b) {
    const float* v = x + b * kQK4_0;
    float amax = 0.0f;
    float max = 0.0f;
    for (int64_t i = 0; i < kQK4_0; ++i) {
      if (std::fabs(v[i]) > amax) {
        amax = std::fabs(v[i]);
        max = v[i];
      }
    }
    // The signed extreme maps to -8 exactly, which gains one level over a symmetric scale.
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    out[b].d = fp32_to_fp16(d);
    for (int64_t j = 0; j < kHalf; ++j) {
      const auto lo = std::min<int>(15, static_cast<int8_t>(v[j] * id + 8.5f));
      const auto hi = std::min<int>(15, static_cast<int8_t>(v[j + kHalf] * id + 8.5f));
      out[b].qs[j] = static_cast<uint8_t>(lo | hi << 4);
    }
  }
}

void convert_row_f16(const float* x, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = fp32_to_fp16(x[i]);
}

void convert_row_bf16(const float* x, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = fp32_to_bf16(x[i]);
}

void quantize_row(DType dtype, const float* x, std::byte* out, int64_t n) {
  const QuantizeRow encode = traits(dtype).quantize;
  if (encode == nullptr) {
    throw Error(ErrorCategory::kUnsupported,
                "cannot quantize to dtype " + std::string(to_string(dtype)) +
                    " (supported: f32, f16, bf16, fp8_e4m3, q8_0, q4_0, q4_1, q5_0, q5_1, "
                    "q2_K, q3_K, q4_K, q5_K, q6_K, int8, int4_g32, int4_g128, fp8, "
                    "int8_scaled)");
  }
  encode(x, out, n);
}

}  // namespace baton
