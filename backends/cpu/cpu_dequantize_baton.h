#pragma once

// Row decoders (see cpu_dequantize.h) for Baton's own weight types: per-row int8 and FP8, whose
// rows start with their f32 scale, and group-wise int4, decoded one kChunk of 32 elements (one
// half of a 64-element chunk of nibbles) at a time.

#include <array>
#include <cstdint>
#include <cstring>

#include "core/runtime/dtype.h"
#include "core/runtime/fp8.h"
#include "core/runtime/half.h"

namespace baton::cpu {

inline float row_header_scale(const std::byte* row) {
  float scale = 0.0f;
  std::memcpy(&scale, row, sizeof(scale));
  return scale;
}

struct Int8Row {
  static const float* decode(const std::byte* row, int64_t first, int64_t, float* tmp) {
    const float scale = row_header_scale(row);
    const auto* q = reinterpret_cast<const int8_t*>(row + sizeof(float)) + first;
    for (int i = 0; i < 32; ++i) tmp[i] = scale * static_cast<float>(q[i]);
    return tmp;
  }
};

struct Fp8Row {
  static const float* decode(const std::byte* row, int64_t first, int64_t, float* tmp) {
    const float scale = row_header_scale(row);
    const auto* q = reinterpret_cast<const uint8_t*>(row + sizeof(float)) + first;
    const std::array<float, 256>& table = fp8_e4m3_table();
    for (int i = 0; i < 32; ++i) tmp[i] = scale * table[q[i]];
    return tmp;
  }
};

template <DType kType>
struct Int4Row {
  static const float* decode(const std::byte* row, int64_t first, int64_t, float* tmp) {
    const Int4Place place = int4_place(kType, row, first / 32);
    const float d = fp16_to_fp32(*place.scale);
    const auto* quants = reinterpret_cast<const uint8_t*>(place.chunk);
    const int shift = place.high ? 4 : 0;
    for (int i = 0; i < 32; ++i) tmp[i] = d * static_cast<float>(((quants[i] >> shift) & 15) - 8);
    return tmp;
  }
};

}  // namespace baton::cpu
