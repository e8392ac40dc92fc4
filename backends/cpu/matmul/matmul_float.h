#pragma once

// Internals of matmul_float (F32, F16, BF16 weights). Few rows of x (decode) run the per-ISA
// GEMV kernels on the weights as loaded; from gemm_min_rows rows up (prefill), weights with a
// prepacked copy (packed_weights.h) run oneDNN's GEMM instead.

#include <cstdint>
#include <string>

#include "backends/cpu/cpu_kernels.h"
#include "core/runtime/dtype.h"

namespace baton::cpu {

// Rows of x from which oneDNN's GEMM on a packed copy of `packed` elements beats the GEMV on
// the weights as loaded:
//  - bf16 (2 bytes a weight, as many as the file's): from 3 rows the GEMV turns load-bound and
//    the GEMM is faster; at 1-2 rows both run near the memory bandwidth, and the GEMV keeps
//    decode exact in fp32;
//  - f32 (4 bytes a weight, the copy on AVX2 hosts) streams twice the F16 file's bytes, so the
//    GEMV wins for as long as few rows keep it memory-bound, up to about 32 rows.
// Measured in docs/results/2026-12-02-bf16-gemm-threshold.md (bf16) and
// docs/results/2026-12-03-avx2-panel-kernel-zen3.md (f32).
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
