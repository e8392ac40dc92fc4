#pragma once

// Writing one f32 row into an f32 or f16 KV cache, shared by kv_write and the fused
// rope + kv_write. The f16 rounding is the reference's (round to nearest even), so caches match
// the reference bit for bit.

#include <cstdint>
#include <cstring>

#include "core/half.h"

namespace baton::cpu {

inline void store_row(float* dst, const float* src, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}
inline void store_row(uint16_t* dst, const float* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = fp32_to_fp16(src[i]);
}

}  // namespace baton::cpu
