// Reference decoders of the plain float types and the two simplest blocks (Q8_0, Q4_0).

#include "core/runtime/dtype.h"
#include "core/runtime/fp8.h"
#include "core/runtime/half.h"
#include "core/runtime/quantize/dequantize.h"

namespace baton {

void dequantize_f32(const std::byte* row, int64_t n, float* out) {
  const auto* p = reinterpret_cast<const float*>(row);
  for (int64_t i = 0; i < n; ++i) out[i] = p[i];
}

void dequantize_f16(const std::byte* row, int64_t n, float* out) {
  const auto* p = reinterpret_cast<const uint16_t*>(row);
  for (int64_t i = 0; i < n; ++i) out[i] = fp16_to_fp32(p[i]);
}

void dequantize_bf16(const std::byte* row, int64_t n, float* out) {
  const auto* p = reinterpret_cast<const uint16_t*>(row);
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_fp32(p[i]);
}

void dequantize_fp8_e4m3(const std::byte* row, int64_t n, float* out) {
  const auto* p = reinterpret_cast<const uint8_t*>(row);
  for (int64_t i = 0; i < n; ++i) out[i] = fp8_e4m3_to_fp32(p[i]);
}

void dequantize_q8_0(const std::byte* row, int64_t n, float* out) {
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(row);
  for (int64_t i = 0; i < n; ++i) {
    const BlockQ8_0& b = blocks[i / kQK8_0];
    out[i] = fp16_to_fp32(b.d) * static_cast<float>(b.qs[i % kQK8_0]);
  }
}

void dequantize_q4_0(const std::byte* row, int64_t n, float* out) {
  const auto* blocks = reinterpret_cast<const BlockQ4_0*>(row);
  constexpr int64_t kHalf = kQK4_0 / 2;
  for (int64_t i = 0; i < n; ++i) {
    const BlockQ4_0& b = blocks[i / kQK4_0];
    const int64_t j = i % kQK4_0;
    const int q = j < kHalf ? (b.qs[j] & 0x0f) : (b.qs[j - kHalf] >> 4);
    out[i] = fp16_to_fp32(b.d) * static_cast<float>(q - 8);
  }
}

}  // namespace baton
