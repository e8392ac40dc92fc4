#pragma once

// f32 -> weight-dtype conversion into the GGUF block layouts, so that files Baton writes decode
// the same in llama.cpp (F16, BF16, Q8_0 and Q4_0 bit for bit as ggml's reference quantizers
// write them). Used to make weights (`baton synth`, benchmarks, tests), never on a model's hot
// path.

#include <cstddef>
#include <cstdint>

#include "core/runtime/dtype.h"

namespace baton {

// Q8_0: per block of 32, d = max|x| / 127 and q = round(x / d) (half away from zero).
void quantize_row_q8_0(const float* x, BlockQ8_0* out, int64_t n);
// Q4_0: per block of 32, d = m / -8 where m is the element of largest magnitude (keeping its
// sign), and q = min(15, trunc(x / d + 8.5)); the element equal to -m clamps to 15.
void quantize_row_q4_0(const float* x, BlockQ4_0* out, int64_t n);

// The other types round each element to the nearest value the block can hold with its scales
// as stored (fp16, and the K-quants' small integer sub-block scales), so every element is within
// half a stored step of its input unless it lies outside the block's representable range. They
// are not bit-identical to ggml's quantizers; llama.cpp decodes them all the same.
//
// Q4_1, Q5_1: per block of 32, d = (max - min) / (2^bits - 1) and m = min.
void quantize_row_q4_1(const float* x, BlockQ4_1* out, int64_t n);
void quantize_row_q5_1(const float* x, BlockQ5_1* out, int64_t n);
// Q5_0: as Q4_0 with 5 bits: d = m / -16 for the element m of largest magnitude.
void quantize_row_q5_0(const float* x, BlockQ5_0* out, int64_t n);

// K-quants (super-blocks of 256): each sub-block's scale (and min) is chosen among a few
// candidate ranges, from its full range down to clipping its outliers, refitted by least
// squares and kept where the squared error is least; the super-block scales d (and dmin) then
// map the largest sub-block scale (and min) onto the top integer code.
void quantize_row_q2_k(const float* x, BlockQ2_K* out, int64_t n);
void quantize_row_q3_k(const float* x, BlockQ3_K* out, int64_t n);
void quantize_row_q4_k(const float* x, BlockQ4_K* out, int64_t n);
void quantize_row_q5_k(const float* x, BlockQ5_K* out, int64_t n);
void quantize_row_q6_k(const float* x, BlockQ6_K* out, int64_t n);

// Baton's own types (layouts in core/runtime/dtype.h); `out` receives one whole row of n elements.
// int8: scale = max|x| / 127, q = round(x / scale). fp8: scale = max|x| / 448, E4M3 of
// x / scale. int4 (kI4G32, kI4G128): per group, the fp16 step (signed as Q4_0's, mapping the
// largest magnitude to -8) with the least x^2-weighted squared error among steps from 4% above the
// group's full range down to 24% clipping and their least-squares refits.
void quantize_row_int8(const float* x, std::byte* out, int64_t n);
// kI8Scaled: as int8, for a row of any length.
void quantize_row_int8_scaled(const float* x, std::byte* out, int64_t n);
void quantize_row_fp8(const float* x, std::byte* out, int64_t n);
void quantize_row_int4(DType dtype, const float* x, std::byte* out, int64_t n);

// Round to nearest even; out-of-range values become infinities, NaN stays NaN.
void convert_row_f16(const float* x, uint16_t* out, int64_t n);
void convert_row_bf16(const float* x, uint16_t* out, int64_t n);

// Writes `n` floats as `dtype` (any weight dtype of core/runtime/dtype.h) into `out`, which holds
// row_bytes(dtype, n) bytes; for types with row headers `n` is a whole row. Throws
// Error(kInvalidArgument) when `n` is not a whole number of blocks, Error(kUnsupported) naming any
// other dtype.
void quantize_row(DType dtype, const float* x, std::byte* out, int64_t n);

}  // namespace baton
