#pragma once

// Row decoders, one per dtype, which the dtype table (core/runtime/dtype.h) holds beside each
// type's encoder. Each reads `n` elements (a whole number of blocks) of one row in its GGUF layout
// (core/runtime/dtype.h) and defines their values element by element, straight from the layout's
// description, so the CPU kernels' block-wise decoders are checked against an independent
// reading. They are the reference, never a hot path.

#include <cstddef>
#include <cstdint>

#include "core/runtime/dtype.h"

namespace baton {

void dequantize_f32(const std::byte* row, int64_t n, float* out);
void dequantize_f16(const std::byte* row, int64_t n, float* out);
void dequantize_bf16(const std::byte* row, int64_t n, float* out);
void dequantize_fp8_e4m3(const std::byte* row, int64_t n, float* out);
void dequantize_q8_0(const std::byte* row, int64_t n, float* out);
void dequantize_q4_0(const std::byte* row, int64_t n, float* out);
void dequantize_q4_1(const std::byte* row, int64_t n, float* out);
void dequantize_q5_0(const std::byte* row, int64_t n, float* out);
void dequantize_q5_1(const std::byte* row, int64_t n, float* out);
void dequantize_q2_k(const std::byte* row, int64_t n, float* out);
void dequantize_q3_k(const std::byte* row, int64_t n, float* out);
void dequantize_q4_k(const std::byte* row, int64_t n, float* out);
void dequantize_q5_k(const std::byte* row, int64_t n, float* out);
void dequantize_q6_k(const std::byte* row, int64_t n, float* out);
// Baton's own types; `row` points at the row's header.
void dequantize_int8(const std::byte* row, int64_t n, float* out);
void dequantize_fp8(const std::byte* row, int64_t n, float* out);
void dequantize_int4(DType dtype, const std::byte* row, int64_t n, float* out);

}  // namespace baton
