#pragma once

// Where a KV-cache row lives, shared by kv_write and the fused rope + kv_write. Rows are
// encoded with ops/quantize.h's quantize_row (f32 copy, f16, bf16, q8_0, fp8), the reference's own
// encoder, so caches match the reference bit for bit.

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace baton::cpu {

// Cache row `row` (one token, all KV heads: `n` values) of a cache tensor's bytes.
inline std::byte* cache_row_bytes(std::byte* cache, DType dtype, int64_t row, int64_t n) {
  return cache + static_cast<size_t>(row) * bytes_for(dtype, n);
}

}  // namespace baton::cpu
