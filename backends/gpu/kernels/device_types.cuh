#pragma once

// Device-side views of weight and cache elements, shared by the kernels. The block structs
// repeat ggml's layouts (core/runtime/dtype.h) so kernels need no C++20 Baton header.

#include <cstdint>

#include "backends/gpu/gpu_runtime.h"
#include "backends/gpu/kernels/kernels.h"

namespace baton::gpu {

constexpr int kQuantBlock = 32;

struct BlockQ8_0 {
  uint16_t d;  // fp16 scale
  int8_t qs[kQuantBlock];
};
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQuantBlock / 2];  // element i < 16 low nibble of qs[i], i + 16 its high nibble
};
static_assert(sizeof(BlockQ8_0) == 34, "ggml block_q8_0 layout");
static_assert(sizeof(BlockQ4_0) == 18, "ggml block_q4_0 layout");

__device__ inline float fp16_bits_to_float(uint16_t bits) {
  return half_to_float(__ushort_as_half(bits));
}

// Element i of a row of weights, as the reference's dequantize_row computes it: the scale
// times the quant in f32 (exact, as an fp16 scale times a small integer fits in 24 bits).
template <WeightType type>
__device__ inline float load_weight(const void* row, int64_t i) {
  if constexpr (type == WeightType::kF32) {
    return static_cast<const float*>(row)[i];
  } else if constexpr (type == WeightType::kF16) {
    return half_to_float(static_cast<const gpu_half*>(row)[i]);
  } else if constexpr (type == WeightType::kBF16) {
    return bf16_to_float(static_cast<const gpu_bf16*>(row)[i]);
  } else if constexpr (type == WeightType::kQ8_0) {
    const BlockQ8_0& b = static_cast<const BlockQ8_0*>(row)[i / kQuantBlock];
    return fp16_bits_to_float(b.d) * static_cast<float>(b.qs[i % kQuantBlock]);
  } else {
    const BlockQ4_0& b = static_cast<const BlockQ4_0*>(row)[i / kQuantBlock];
    const int j = static_cast<int>(i % kQuantBlock);
    const int q = j < kQuantBlock / 2 ? (b.qs[j] & 0x0f) : (b.qs[j - kQuantBlock / 2] >> 4);
    return fp16_bits_to_float(b.d) * static_cast<float>(q - 8);
  }
}

// KV caches and LoRA slots hold f32 or f16; kernels are templated on the element type.
__device__ inline float load_cache(const float* p) {
  return *p;
}
__device__ inline float load_cache(const gpu_half* p) {
  return half_to_float(*p);
}
__device__ inline void store_cache(float* p, float value) {
  *p = value;
}
__device__ inline void store_cache(gpu_half* p, float value) {
  *p = float_to_half(value);
}

// Cache row of position `pos` of sequence `seq`.
__device__ inline int64_t paged_row(const PagedView& paged, int32_t seq, int32_t pos) {
  const int32_t block =
      paged.block_tables[static_cast<int64_t>(seq) * paged.table_stride + pos / paged.block_size];
  return static_cast<int64_t>(block) * paged.block_size + pos % paged.block_size;
}

// Reports an out-of-range index once (see IndexError).
__device__ inline void report_index_error(const IndexError& error, int32_t value,
                                          int64_t position) {
  if (atomicCAS(error.slot, 0, error.tag + 1) == 0) {
    error.slot[1] = value;
    error.slot[2] = static_cast<int32_t>(position);
  }
}

// Launch geometry shared by element-wise kernels: enough blocks of kThreads for n items,
// each thread striding over the rest (grids are capped so huge n never overflows a dimension).
constexpr int kThreads = 256;
inline unsigned int blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}

}  // namespace baton::gpu
