// Reference decoders of the 32-element "_1" and 5-bit blocks (Q4_1, Q5_0, Q5_1). Values are
// computed in fp32 in ggml's order (d * q + m), so they equal what llama.cpp decodes.

#include "core/runtime/dtype.h"
#include "core/runtime/half.h"
#include "core/runtime/quantize/dequantize.h"

namespace baton {
namespace {

// Element j of a 32-element block: its nibble (low nibbles first, then high nibbles).
int nibble(const uint8_t* qs, int64_t j) {
  return j < 16 ? qs[j] & 15 : qs[j - 16] >> 4;
}

// The fifth bit of element j: bit j of qh read as a little-endian uint32.
int fifth_bit(const uint8_t (&qh)[4], int64_t j) {
  return (qh[j / 8] >> (j % 8)) & 1;
}

}  // namespace

void dequantize_q4_1(const std::byte* row, int64_t n, float* out) {
  const auto* blocks = reinterpret_cast<const BlockQ4_1*>(row);
  for (int64_t i = 0; i < n; ++i) {
    const BlockQ4_1& b = blocks[i / kQK4_1];
    const int q = nibble(b.qs, i % kQK4_1);
    out[i] = static_cast<float>(q) * fp16_to_fp32(b.d) + fp16_to_fp32(b.m);
  }
}

void dequantize_q5_0(const std::byte* row, int64_t n, float* out) {
  const auto* blocks = reinterpret_cast<const BlockQ5_0*>(row);
  for (int64_t i = 0; i < n; ++i) {
    const BlockQ5_0& b = blocks[i / kQK5_0];
    const int64_t j = i % kQK5_0;
    const int q = nibble(b.qs, j) | fifth_bit(b.qh, j) << 4;
    out[i] = static_cast<float>(q - 16) * fp16_to_fp32(b.d);
  }
}

void dequantize_q5_1(const std::byte* row, int64_t n, float* out) {
  const auto* blocks = reinterpret_cast<const BlockQ5_1*>(row);
  for (int64_t i = 0; i < n; ++i) {
    const BlockQ5_1& b = blocks[i / kQK5_1];
    const int64_t j = i % kQK5_1;
    const int q = nibble(b.qs, j) | fifth_bit(b.qh, j) << 4;
    out[i] = static_cast<float>(q) * fp16_to_fp32(b.d) + fp16_to_fp32(b.m);
  }
}

}  // namespace baton
