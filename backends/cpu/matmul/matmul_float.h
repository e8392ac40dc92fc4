#pragma once

// Internals of matmul_float (F32, F16, BF16 weights). Few rows of x (decode) run the per-ISA
// GEMV kernels on the weights as loaded; from gemm_min_rows rows up (prefill), weights with a
// prepacked copy (packed_weights.h) run oneDNN's GEMM instead.

#include <cstdint>
#include <string>

#include "backends/cpu/cpu_kernels.h"
#include "core/dtype.h"

namespace baton::cpu {

// Rows of x from which oneDNN's GEMM on a packed copy of `packed` elements beats the GEMV on
// the weights as loaded:
//  - bf16 (2 bytes a weight), measured on 2 Zen 5 cores (5632 x 2048 weights): from 3 rows of x
//    the GEMM takes about half the GEMV's time (the GEMV turns load-bound); at 1-2 rows both are
//    near the memory bandwidth, and the GEMV keeps decode exact in fp32;
//  - f32 (4 bytes a weight, AVX2 hosts) streams twice the F16 file's bytes, so the GEMV wins
//    while few rows keep it memory-bound: on 2 Zen 3 cores, TinyLlama F16 prefill of 3, 16 and
//    32 tokens ran at 29.5, 42.0 and 39.3 t/s by GEMV against 8.9, 38.4 and 42.4 by GEMM.
constexpr int64_t gemm_min_rows(DType packed) {
  return packed == DType::kBF16 ? 3 : 32;
}

namespace avx512 {
void float_gemv(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out);
}  // namespace avx512
namespace avx2 {
void float_gemv(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out);
}  // namespace avx2

// describe_matmul_path (matmul.h) for F32, F16, BF16 and FP8 weights.
std::string describe_float_matmul_path(DType dtype, bool prepacked);

}  // namespace baton::cpu
