#pragma once

// Internals of matmul_float (F32, F16, BF16 weights). Few rows of x (decode) run the per-ISA
// GEMV kernels on the weights as loaded; from kGemmMinRows rows up (prefill), weights with a
// prepacked copy (packed_weights.h) run oneDNN's GEMM instead.

#include <cstdint>
#include <string>

#include "backends/cpu/cpu_kernels.h"

namespace baton::cpu {

// Measured on 2 Zen 5 cores (5632 x 2048 weights): from 3 rows of x the GEMM on packed weights
// takes about half the GEMV's time (the GEMV turns load-bound); at 1-2 rows both are near the
// memory bandwidth, and the GEMV keeps decode exact in fp32.
constexpr int64_t kGemmMinRows = 3;

namespace avx512 {
void float_gemv(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out);
}  // namespace avx512
namespace avx2 {
void float_gemv(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out);
}  // namespace avx2

// describe_matmul_path (matmul.h) for F32, F16, BF16 and FP8 weights.
std::string describe_float_matmul_path(DType dtype, bool prepacked);

}  // namespace baton::cpu
