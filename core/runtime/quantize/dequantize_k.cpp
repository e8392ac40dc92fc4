// Reference decoders of the K-quant super-blocks (Q2_K .. Q6_K), element by element from the
// layouts described in core/runtime/dtype.h, whose helpers unpack the sub-block scales. Values
// are computed in fp32 in ggml's order (d * scale first, then times the quant, minus dmin * min),
// so they equal what llama.cpp decodes.

#include "core/runtime/dtype.h"
#include "core/runtime/half.h"
#include "core/runtime/quantize/dequantize.h"

namespace baton {
namespace {

// The two low bits of element e of a Q2_K or Q3_K super-block.
int low_two_bits(const uint8_t* qs, int64_t e) {
  return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

}  // namespace

void dequantize_q2_k(const std::byte* row, int64_t n, float* out) {
  const auto* blocks = reinterpret_cast<const BlockQ2_K*>(row);
  for (int64_t i = 0; i < n; ++i) {
    const BlockQ2_K& b = blocks[i / kQK_K];
    const int64_t e = i % kQK_K;
    const uint8_t sm = b.scales[e / 16];
    const float dl = fp16_to_fp32(b.d) * static_cast<float>(sm & 15);
    const float ml = fp16_to_fp32(b.dmin) * static_cast<float>(sm >> 4);
    out[i] = dl * static_cast<float>(low_two_bits(b.qs, e)) - ml;
  }
}

void dequantize_q3_k(const std::byte* row, int64_t n, float* out) {
  const auto* blocks = reinterpret_cast<const BlockQ3_K*>(row);
  for (int64_t i = 0; i < n; ++i) {
    const BlockQ3_K& b = blocks[i / kQK_K];
    const int64_t e = i % kQK_K;
    const int high = (b.hmask[e % 32] >> (e / 32)) & 1;
    const int q = (low_two_bits(b.qs, e) | high << 2) - 4;
    const float dl =
        fp16_to_fp32(b.d) * static_cast<float>(q3_k_scale(b.scales, static_cast<int>(e / 16)));
    out[i] = dl * static_cast<float>(q);
  }
}

void dequantize_q4_k(const std::byte* row, int64_t n, float* out) {
  const auto* blocks = reinterpret_cast<const BlockQ4_K*>(row);
  for (int64_t i = 0; i < n; ++i) {
    const BlockQ4_K& b = blocks[i / kQK_K];
    const int64_t e = i % kQK_K, s = e / 32;
    const uint8_t byte = b.qs[32 * (s / 2) + e % 32];
    const int q = s % 2 == 0 ? byte & 15 : byte >> 4;
    const float dl =
        fp16_to_fp32(b.d) * static_cast<float>(q4_k_scale(b.scales, static_cast<int>(s)));
    const float ml =
        fp16_to_fp32(b.dmin) * static_cast<float>(q4_k_min(b.scales, static_cast<int>(s)));
    out[i] = dl * static_cast<float>(q) - ml;
  }
}

void dequantize_q5_k(const std::byte* row, int64_t n, float* out) {
  const auto* blocks = reinterpret_cast<const BlockQ5_K*>(row);
  for (int64_t i = 0; i < n; ++i) {
    const BlockQ5_K& b = blocks[i / kQK_K];
    const int64_t e = i % kQK_K, s = e / 32;
    const uint8_t byte = b.qs[32 * (s / 2) + e % 32];
    const int high = (b.qh[e % 32] >> s) & 1;
    const int q = (s % 2 == 0 ? byte & 15 : byte >> 4) | high << 4;
    const float dl =
        fp16_to_fp32(b.d) * static_cast<float>(q4_k_scale(b.scales, static_cast<int>(s)));
    const float ml =
        fp16_to_fp32(b.dmin) * static_cast<float>(q4_k_min(b.scales, static_cast<int>(s)));
    out[i] = dl * static_cast<float>(q) - ml;
  }
}

void dequantize_q6_k(const std::byte* row, int64_t n, float* out) {
  const auto* blocks = reinterpret_cast<const BlockQ6_K*>(row);
  for (int64_t i = 0; i < n; ++i) {
    const BlockQ6_K& b = blocks[i / kQK_K];
    const int64_t e = i % kQK_K, h = e / 128, j = e % 128;
    const uint8_t low_byte = b.ql[64 * h + j % 64];
    const int low = j < 64 ? low_byte & 15 : low_byte >> 4;
    const int high = (b.qh[32 * h + j % 32] >> (2 * (j / 32))) & 3;
    const int q = (low | high << 4) - 32;
    out[i] = fp16_to_fp32(b.d) * static_cast<float>(b.scales[e / 16]) * static_cast<float>(q);
  }
}

}  // namespace baton
