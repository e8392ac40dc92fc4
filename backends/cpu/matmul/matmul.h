#pragma once

// The matmul kernels behind cpu::matmul, split by weight dtype family. Each family chooses its
// decode (few rows of x) and prefill (many rows) paths and its instruction-set level itself.

#include <string>

#include "backends/cpu/cpu_kernels.h"

namespace baton::cpu {

// Any weight dtype, portable C++: the reference-accurate fallback and the kGeneric ISA level.
void matmul_generic(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out);
// Block-quantized weights (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1; Baton's int8, int4): in their GGUF
// layout, or Q4_0 / Q8_0 from repacked panels on AVX-512.
void matmul_quantized(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out);
// K-quant weights (Q2_K .. Q6_K) read in their GGUF layout.
void matmul_kquant(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out);
// Floating-point weights (F32, F16, BF16).
void matmul_float(const Context& ctx, const Tensor& x, const Tensor& w, const Tensor& out);

// The decode and prefill kernels this machine runs for a matmul with `dtype` weights, at the
// active ISA level, for `baton info` and `baton bench`; `prepacked` says whether the backend
// prepacks weights (BackendOptions::prepack_weights).
std::string describe_matmul_path(DType dtype, bool prepacked);
// describe_matmul_path of every weight dtype, one "<dtype> weights: <path>" line each.
std::string describe_matmul_paths(bool prepacked);

}  // namespace baton::cpu
