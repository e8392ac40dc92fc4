#pragma once

// Row decoders (see cpu_dequantize.h) for Q4_1, Q5_0, Q5_1 and the K-quants. A K-quant
// super-block of 256 is decoded one kChunk of 32 at a time: every chunk of every K layout sits
// under one or two sub-block scales, so each decode touches only its own bytes.

#include <cstdint>
#include <cstring>

#include "core/runtime/dtype.h"
#include "core/runtime/half.h"

namespace baton::cpu {

// The 32 codes of a Q4_x / Q5_x block: nibbles, plus the fifth bits of qh when given.
inline void legacy_codes(const uint8_t* qs, const uint8_t* qh, int (&q)[32]) {
  uint32_t high = 0;
  if (qh) std::memcpy(&high, qh, sizeof(high));
  for (int j = 0; j < 16; ++j) {
    q[j] = (qs[j] & 15) | ((high >> j) & 1) << 4;
    q[j + 16] = (qs[j] >> 4) | ((high >> (j + 16)) & 1) << 4;
  }
}

struct Q4_1Row {
  static const float* decode(const std::byte* row, int64_t first, int64_t, float* tmp) {
    const BlockQ4_1& b = reinterpret_cast<const BlockQ4_1*>(row)[first / kQK4_1];
    int q[32];
    legacy_codes(b.qs, nullptr, q);
    const float d = fp16_to_fp32(b.d), m = fp16_to_fp32(b.m);
    for (int i = 0; i < 32; ++i) tmp[i] = static_cast<float>(q[i]) * d + m;
    return tmp;
  }
};

struct Q5_0Row {
  static const float* decode(const std::byte* row, int64_t first, int64_t, float* tmp) {
    const BlockQ5_0& b = reinterpret_cast<const BlockQ5_0*>(row)[first / kQK5_0];
    int q[32];
    legacy_codes(b.qs, b.qh, q);
    const float d = fp16_to_fp32(b.d);
    for (int i = 0; i < 32; ++i) tmp[i] = static_cast<float>(q[i] - 16) * d;
    return tmp;
  }
};

struct Q5_1Row {
  static const float* decode(const std::byte* row, int64_t first, int64_t, float* tmp) {
    const BlockQ5_1& b = reinterpret_cast<const BlockQ5_1*>(row)[first / kQK5_1];
    int q[32];
    legacy_codes(b.qs, b.qh, q);
    const float d = fp16_to_fp32(b.d), m = fp16_to_fp32(b.m);
    for (int i = 0; i < 32; ++i) tmp[i] = static_cast<float>(q[i]) * d + m;
    return tmp;
  }
};

// The super-block holding element `first` of a K-quant row, and the chunk's index in it (0..7).
template <typename Block>
const Block& super_block(const std::byte* row, int64_t first, int& chunk) {
  chunk = static_cast<int>(first % kQK_K) / 32;
  return reinterpret_cast<const Block*>(row)[first / kQK_K];
}

// Q2_K and Q3_K: chunk c holds bit pair c % 4 of qs[32 * (c / 4) ..] and sub-blocks 2c, 2c + 1.
struct Q2_KRow {
  static const float* decode(const std::byte* row, int64_t first, int64_t, float* tmp) {
    int c;
    const BlockQ2_K& b = super_block<BlockQ2_K>(row, first, c);
    const uint8_t* qs = b.qs + 32 * (c / 4);
    const int shift = 2 * (c % 4);
    const float d = fp16_to_fp32(b.d), dmin = fp16_to_fp32(b.dmin);
    for (int half = 0; half < 2; ++half) {
      const uint8_t sm = b.scales[2 * c + half];
      const float dl = d * static_cast<float>(sm & 15), ml = dmin * static_cast<float>(sm >> 4);
      for (int l = 16 * half; l < 16 * half + 16; ++l) {
        tmp[l] = dl * static_cast<float>((qs[l] >> shift) & 3) - ml;
      }
    }
    return tmp;
  }
};

struct Q3_KRow {
  static const float* decode(const std::byte* row, int64_t first, int64_t, float* tmp) {
    int c;
    const BlockQ3_K& b = super_block<BlockQ3_K>(row, first, c);
    const uint8_t* qs = b.qs + 32 * (c / 4);
    const int shift = 2 * (c % 4);
    const float d = fp16_to_fp32(b.d);
    for (int half = 0; half < 2; ++half) {
      const float dl = d * static_cast<float>(q3_k_scale(b.scales, 2 * c + half));
      for (int l = 16 * half; l < 16 * half + 16; ++l) {
        const int q = ((qs[l] >> shift) & 3) | ((b.hmask[l] >> c) & 1) << 2;
        tmp[l] = dl * static_cast<float>(q - 4);
      }
    }
    return tmp;
  }
};

// Q4_K and Q5_K: chunk c is sub-block c, the low (c even) or high nibbles of qs[32 * (c / 2) ..].
template <typename Block, bool kFifthBit>
struct QK4Row {
  static const float* decode(const std::byte* row, int64_t first, int64_t, float* tmp) {
    int c;
    const Block& b = super_block<Block>(row, first, c);
    const float dl = fp16_to_fp32(b.d) * static_cast<float>(q4_k_scale(b.scales, c));
    const float ml = fp16_to_fp32(b.dmin) * static_cast<float>(q4_k_min(b.scales, c));
    const uint8_t* qs = b.qs + 32 * (c / 2);
    const int shift = 4 * (c % 2);
    for (int l = 0; l < 32; ++l) {
      int q = (qs[l] >> shift) & 15;
      if constexpr (kFifthBit) q |= ((b.qh[l] >> c) & 1) << 4;
      tmp[l] = dl * static_cast<float>(q) - ml;
    }
    return tmp;
  }
};
using Q4_KRow = QK4Row<BlockQ4_K, false>;
using Q5_KRow = QK4Row<BlockQ5_K, true>;

// Q6_K: chunk c = 4h + t takes nibble t / 2 of ql[64h + 32 (t % 2) ..] and bit pair t of
// qh[32h ..].
struct Q6_KRow {
  static const float* decode(const std::byte* row, int64_t first, int64_t, float* tmp) {
    int c;
    const BlockQ6_K& b = super_block<BlockQ6_K>(row, first, c);
    const int h = c / 4, t = c % 4;
    const uint8_t* ql = b.ql + 64 * h + 32 * (t % 2);
    const uint8_t* qh = b.qh + 32 * h;
    const float d = fp16_to_fp32(b.d);
    for (int half = 0; half < 2; ++half) {
      const float dl = d * static_cast<float>(b.scales[2 * c + half]);
      for (int l = 16 * half; l < 16 * half + 16; ++l) {
        const int q = ((ql[l] >> (4 * (t / 2))) & 15) | ((qh[l] >> (2 * t)) & 3) << 4;
        tmp[l] = dl * static_cast<float>(q - 32);
      }
    }
    return tmp;
  }
};

}  // namespace baton::cpu
