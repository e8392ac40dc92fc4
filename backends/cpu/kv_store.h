#pragma once

// Writing one f32 row into an f32, f16, q8_0 or fp8 KV cache, shared by kv_write and the fused
// rope + kv_write. The f16 rounding is the reference's (round to nearest even) and q8_0 is
// ops/quantize.h's encoder, so caches match the reference bit for bit.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/dtype.h"
#include "core/fp8.h"
#include "core/half.h"
#include "ops/quantize.h"

namespace baton::cpu {

// Cache row `row` (one token, all KV heads: `n` values) of a cache tensor's bytes.
inline std::byte* cache_row_bytes(std::byte* cache, DType dtype, int64_t row, int64_t n) {
  return cache + static_cast<size_t>(row) * bytes_for(dtype, n);
}

inline void store_row(DType dtype, std::byte* dst, const float* src, int64_t n) {
  switch (dtype) {
    case DType::kF16: {
      auto* out = reinterpret_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) out[i] = fp32_to_fp16(src[i]);
      return;
    }
    case DType::kQ8_0:
      return quantize_row_q8_0(src, reinterpret_cast<BlockQ8_0*>(dst), n);
    case DType::kF8E4M3: {
      auto* out = reinterpret_cast<uint8_t*>(dst);
      for (int64_t i = 0; i < n; ++i) out[i] = fp32_to_fp8_e4m3(src[i]);
      return;
    }
    default:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  }
}

}  // namespace baton::cpu
