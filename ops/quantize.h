#pragma once

// f32 -> weight-dtype conversion, bit-compatible with ggml's reference quantizers so that files
// Baton writes decode the same in llama.cpp. Used to make weights (`baton synth`, benchmarks,
// tests), never on a model's hot path.

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace baton {

// Q8_0: per block of 32, d = max|x| / 127 and q = round(x / d) (half away from zero).
void quantize_row_q8_0(const float* x, BlockQ8_0* out, int64_t n);
// Q4_0: per block of 32, d = m / -8 where m is the element of largest magnitude (keeping its
// sign), and q = min(15, trunc(x / d + 8.5)); the element equal to -m clamps to 15.
void quantize_row_q4_0(const float* x, BlockQ4_0* out, int64_t n);
// Round to nearest even; out-of-range values become infinities, NaN stays NaN.
void convert_row_f16(const float* x, uint16_t* out, int64_t n);
void convert_row_bf16(const float* x, uint16_t* out, int64_t n);

// Writes `n` floats as `dtype` (f32, f16, bf16, q8_0 or q4_0) into `out`, which holds
// bytes_for(dtype, n) bytes. Throws Error(kInvalidArgument) when `n` is not a whole number of
// blocks, Error(kUnsupported) naming any other dtype.
void quantize_row(DType dtype, const float* x, std::byte* out, int64_t n);

}  // namespace baton
