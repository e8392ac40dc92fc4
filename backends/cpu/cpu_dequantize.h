#pragma once

// Row decoders for the weight dtypes, shared by matmul and embedding. A row is decoded one chunk
// of kChunk elements at a time: one quantization block, and a fixed length the compiler can
// unroll. Each decoder is a type so kernels are instantiated per dtype with no per-element
// dispatch. Decoders of the other quantized types are in cpu_dequantize_legacy_k.h.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/cpu_dequantize_baton.h"
#include "backends/cpu/cpu_dequantize_legacy_k.h"
#include "baton/error.h"
#include "core/runtime/dtype.h"
#include "core/runtime/half.h"

namespace baton::cpu {

constexpr int64_t kChunk = 32;
static_assert(kChunk == kQK8_0 && kChunk == kQK4_0 && kChunk == kQK4_1 && kChunk == kQK5_0 &&
              kChunk == kQK5_1 && kQK_K % kChunk == 0);

// fp16 -> fp32 through a table of all 65536 values: several times faster than the branching
// conversion in scalar code. The ISA-specific kernels will use F16C instead.
inline const float* fp16_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < t.size(); ++h) t[h] = fp16_to_fp32(static_cast<uint16_t>(h));
    return t;
  }();
  return table.data();
}

// decode(row, first, count, tmp) returns `count` floats of the row (from its first byte, any
// header included) starting at element `first` (a multiple of kChunk), either in place or
// written to `tmp`. Quantized rows are whole blocks, so their decoders only see count == kChunk.
struct F32Row {
  static const float* decode(const std::byte* row, int64_t first, int64_t, float*) {
    return reinterpret_cast<const float*>(row) + first;
  }
};

struct F16Row {
  static const float* decode(const std::byte* row, int64_t first, int64_t count, float* tmp) {
    const auto* p = reinterpret_cast<const uint16_t*>(row) + first;
    const float* table = fp16_table();
    for (int64_t i = 0; i < count; ++i) tmp[i] = table[p[i]];
    return tmp;
  }
};

struct BF16Row {
  static const float* decode(const std::byte* row, int64_t first, int64_t count, float* tmp) {
    const auto* p = reinterpret_cast<const uint16_t*>(row) + first;
    for (int64_t i = 0; i < count; ++i) tmp[i] = bf16_to_fp32(p[i]);
    return tmp;
  }
};

struct Q8_0Row {
  static const float* decode(const std::byte* row, int64_t first, int64_t, float* tmp) {
    const BlockQ8_0& b = reinterpret_cast<const BlockQ8_0*>(row)[first / kQK8_0];
    const float d = fp16_to_fp32(b.d);
    for (int64_t i = 0; i < kQK8_0; ++i) tmp[i] = d * static_cast<float>(b.qs[i]);
    return tmp;
  }
};

struct Q4_0Row {
  static const float* decode(const std::byte* row, int64_t first, int64_t, float* tmp) {
    const BlockQ4_0& b = reinterpret_cast<const BlockQ4_0*>(row)[first / kQK4_0];
    const float d = fp16_to_fp32(b.d);
    constexpr int64_t kHalf = kQK4_0 / 2;
    for (int64_t i = 0; i < kHalf; ++i) {
      tmp[i] = d * static_cast<float>((b.qs[i] & 0x0f) - 8);
      tmp[i + kHalf] = d * static_cast<float>((b.qs[i] >> 4) - 8);
    }
    return tmp;
  }
};

template <typename Row>
void decode_row(const std::byte* row, int64_t n, float* out) {
  for (int64_t c = 0; c < n; c += kChunk) {
    const int64_t count = n - c < kChunk ? n - c : kChunk;
    const float* p = Row::decode(row, c, count, out + c);
    if (p != out + c) std::memcpy(out + c, p, static_cast<size_t>(count) * sizeof(float));
  }
}

// Calls f(Row{}) with the decoder of `dtype`, which must satisfy is_weight_dtype.
template <typename F>
decltype(auto) with_row_decoder(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF16:
      return f(F16Row{});
    case DType::kBF16:
      return f(BF16Row{});
    case DType::kQ8_0:
      return f(Q8_0Row{});
    case DType::kQ4_0:
      return f(Q4_0Row{});
    case DType::kQ4_1:
      return f(Q4_1Row{});
    case DType::kQ5_0:
      return f(Q5_0Row{});
    case DType::kQ5_1:
      return f(Q5_1Row{});
    case DType::kQ2_K:
      return f(Q2_KRow{});
    case DType::kQ3_K:
      return f(Q3_KRow{});
    case DType::kQ4_K:
      return f(Q4_KRow{});
    case DType::kQ5_K:
      return f(Q5_KRow{});
    case DType::kQ6_K:
      return f(Q6_KRow{});
    case DType::kI8Row:
      return f(Int8Row{});
    case DType::kF8Row:
      return f(Fp8Row{});
    case DType::kI4G32:
      return f(Int4Row<DType::kI4G32>{});
    case DType::kI4G128:
      return f(Int4Row<DType::kI4G128>{});
    case DType::kF32:
      return f(F32Row{});
    default:
      throw Error(ErrorCategory::kInternal,
                  "no row decoder for dtype " + std::string(to_string(dtype)));
  }
}

}  // namespace baton::cpu
