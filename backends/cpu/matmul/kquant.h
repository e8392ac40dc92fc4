#pragma once

// Internals of matmul_kquant: K-quant weights (Q2_K .. Q6_K) read in their GGUF super-blocks in
// place, against int8 activations.
//
// Every K-quant weight is an affine function of an unsigned code u, with one scale s and offset
// o per group of kGroup = 16 elements (a Q4_K / Q5_K sub-block of 32 is two groups sharing one
// pair): w = s * u + o, where
//   Q2_K: s = d * (sc & 15), o = -dmin * (sc >> 4), u in 0..3
//   Q3_K: s = d * scale,     o = -4 s,              u in 0..7
//   Q4_K: s = d * scale,     o = -dmin * min,       u in 0..15 (Q5_K: 0..31)
//   Q6_K: s = d * scale,     o = -32 s,             u in 0..63
// x is quantized as for Q8_0 (blocks of 32, d_x = max|x| / 127, quants q), so one group adds
//   d_x * s * (u · q) + o * (d_x * Σ q):
// u · q is exact in int32 (vpdpbusd / maddubs take u as the unsigned operand; u <= 63 keeps
// maddubs' int16 pairs from saturating), and d_x * Σ q depends on x alone, so it is computed once
// per call (group_sums).

#include <cstddef>
#include <cstdint>
#include <memory>

#include "backends/cpu/matmul/quantized.h"
#include "core/runtime/dtype.h"

namespace baton::cpu {

constexpr int64_t kGroup = 16;
constexpr int64_t kGroupsPerSuperBlock = kQK_K / kGroup;

bool is_kquant(DType dtype);

// n rows of x quantized in blocks of 32, and per group of 16 its d_x * Σ q.
struct KQuantRows {
  KQuantRows(int64_t n_rows, int64_t row_length)
      : q(n_rows, row_length),
        groups(row_length / kGroup),
        group_sums(std::make_unique_for_overwrite<float[]>(n_rows * groups)) {}

  const float* sums_row(int64_t r) const { return group_sums.get() + r * groups; }

  QuantizedRows q;
  int64_t groups;
  std::unique_ptr<float[]> group_sums;
};

// out[r * m + j] = x[r] · w[j] for every row r of x and weight rows j in [first, last); w points
// at weight row 0, rows w_stride bytes apart.
using KQuantKernelFn = void (*)(DType dtype, const std::byte* w, size_t w_stride, int64_t first,
                                int64_t last, const KQuantRows& x, float* out, int64_t m);

namespace avx512 {
// Few rows of x: streams each weight row once (memory-bound decode).
void kquant_gemv(DType dtype, const std::byte* w, size_t w_stride, int64_t first, int64_t last,
                 const KQuantRows& x, float* out, int64_t m);
// Many rows of x: unpacks kKQuantPanel weight rows to codes, scales and offsets in a transient
// buffer, then reuses them across all rows of x (compute-bound prefill).
void kquant_gemm(DType dtype, const std::byte* w, size_t w_stride, int64_t first, int64_t last,
                 const KQuantRows& x, float* out, int64_t m);
constexpr int64_t kKQuantPanel = 32;
}  // namespace avx512

namespace avx2 {
// Any number of rows of x, super-block by super-block.
void kquant_matmul(DType dtype, const std::byte* w, size_t w_stride, int64_t first, int64_t last,
                   const KQuantRows& x, float* out, int64_t m);
}  // namespace avx2

}  // namespace baton::cpu
