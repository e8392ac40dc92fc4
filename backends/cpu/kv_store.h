#pragma once

// How a KV-cache row is written, shared by kv_write and the fused rope + kv_write. Heads are
// encoded with core/runtime/quantize/quantize.h's quantize_row (f32 copy, f16, bf16, q8_0, fp8,
// int8), the reference's own encoder, so caches match the reference bit for bit.

#include <cstddef>
#include <cstdint>

#include "core/runtime/quantize/quantize.h"
#include "core/runtime/tensor.h"

namespace baton::cpu {

// Encodes one token's K or V, `values` = [kv_heads][head_dim], as cache row `row` of `cache`
// ([n_blocks, block_size, kv_heads, head_dim]), one head at a time so that per-row scales
// (int8) are per head.
inline void write_cache_row(const Tensor& cache, int64_t row, const float* values) {
  const int64_t kv_heads = cache.dim(2), head_dim = cache.dim(3);
  const size_t head_bytes = cache.row_bytes();
  std::byte* first = cache.materialize() + static_cast<size_t>(row * kv_heads) * head_bytes;
  for (int64_t h = 0; h < kv_heads; ++h) {
    quantize_row(cache.dtype(), values + h * head_dim, first + h * head_bytes, head_dim);
  }
}

}  // namespace baton::cpu
