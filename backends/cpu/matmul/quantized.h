#pragma once

// Internals of matmul_quantized: activations quantized once per call, and the per-ISA kernels
// that read Q8_0 / Q4_0 weights in their GGUF layout (or, on AVX-512, repacked into panels) and
// Baton's int8 and int4 weights in theirs (core/runtime/dtype.h), and Q4_1 / Q5_0 / Q5_1, the types
// K-quant files fall back to for rows that are not whole super-blocks.
//
// Numerics follow llama.cpp: each row of x becomes int8 blocks of 32 with scale
// d = max|x| / 127, every block dot product is exact in int32, and d_w * d_x scales it in fp32.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "core/runtime/dtype.h"

namespace baton::cpu {

constexpr int64_t kQuantBlock = 32;

// Up to this many rows of x the AVX-512 GEMV beats packing panels for the GEMM: on one 4096 x
// 4096 Q4_0 weight, 8 rows took 2.2 ms by GEMV and 2.7 by GEMM, 16 rows 3.9 and 3.3 (K-quants
// switch at the same count).
constexpr int64_t kGemvMaxRows = 8;
// Weight rows per unit of GEMV work: large enough that a chunk streams whole pages, small
// enough that a slow thread does not hold up the step.
constexpr int64_t kGemvChunk = 16;
static_assert(kQuantBlock == kQK8_0 && kQuantBlock == kQK4_0);

// The kernels multiply x by weights shifted to unsigned bytes (Q4_0 and int4 nibbles are w + 8,
// Q5_0 codes w + 16; the AVX-512 GEMM packs Q8_0 and int8 as w + 128), so each block's dot
// carries offset * sum(x quants), which `corr` cancels. Q4_1 / Q5_1 (value d * q + m) have no
// offset; their offset of -1 makes `corr` the plain sum of x quants, which their minimum term,
// m * d_x * sum, needs.
constexpr bool has_block_minimum(DType dtype) {
  return dtype == DType::kQ4_1 || dtype == DType::kQ5_1;
}
// Types whose quants enter the dot as unsigned codes (w + offset, or Q4_1 / Q5_1's q) rather
// than as signed bytes whose signs move onto x (Q8_0, int8).
constexpr bool has_unsigned_codes(DType dtype) {
  return dtype != DType::kQ8_0 && dtype != DType::kI8Row;
}
// The 32-element GGUF blocks with nibbles (and, for Q5, fifth bits in qh).
constexpr bool is_legacy_block(DType dtype) {
  return dtype == DType::kQ4_0 || dtype == DType::kQ5_0 || has_block_minimum(dtype);
}
constexpr bool has_fifth_bit(DType dtype) {
  return dtype == DType::kQ5_0 || dtype == DType::kQ5_1;
}
template <DType kType>
using LegacyBlock = std::conditional_t<
    kType == DType::kQ4_0, BlockQ4_0,
    std::conditional_t<kType == DType::kQ5_0, BlockQ5_0,
                       std::conditional_t<kType == DType::kQ4_1, BlockQ4_1, BlockQ5_1>>>;

// Calls f(std::integral_constant<DType, T>{}) with the constant of `dtype`, one of the types
// these kernels take, so each kernel is instantiated per type from one switch.
template <typename F>
decltype(auto) with_quantized_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kQ4_0:
      return f(std::integral_constant<DType, DType::kQ4_0>{});
    case DType::kQ5_0:
      return f(std::integral_constant<DType, DType::kQ5_0>{});
    case DType::kQ4_1:
      return f(std::integral_constant<DType, DType::kQ4_1>{});
    case DType::kQ5_1:
      return f(std::integral_constant<DType, DType::kQ5_1>{});
    case DType::kI8Row:
      return f(std::integral_constant<DType, DType::kI8Row>{});
    case DType::kI4G32:
      return f(std::integral_constant<DType, DType::kI4G32>{});
    case DType::kI4G128:
      return f(std::integral_constant<DType, DType::kI4G128>{});
    default:
      return f(std::integral_constant<DType, DType::kQ8_0>{});
  }
}

inline int32_t weight_offset(DType dtype) {
  switch (dtype) {
    case DType::kQ4_1:
    case DType::kQ5_1:
      return -1;
    case DType::kQ4_0:
    case DType::kI4G32:
    case DType::kI4G128:
      return 8;
    case DType::kQ5_0:
      return 16;
    default:
      return 128;
  }
}

// n rows of x, quantized: quants [n][k], and per block its scale and -offset * sum(quants).
struct QuantizedRows {
  QuantizedRows(int64_t n_rows, int64_t row_length)
      : n(n_rows),
        k(row_length),
        blocks(row_length / kQuantBlock),
        qs(std::make_unique_for_overwrite<int8_t[]>(n * k)),
        d(std::make_unique_for_overwrite<float[]>(n * blocks)),
        corr(std::make_unique_for_overwrite<int32_t[]>(n * blocks)) {}

  const int8_t* qs_row(int64_t r) const { return qs.get() + r * k; }
  const float* d_row(int64_t r) const { return d.get() + r * blocks; }
  const int32_t* corr_row(int64_t r) const { return corr.get() + r * blocks; }

  int64_t n, k, blocks;
  std::unique_ptr<int8_t[]> qs;
  std::unique_ptr<float[]> d;
  std::unique_ptr<int32_t[]> corr;
};

// Quantizes one row of k floats. Every ISA computes the same values: scale = 127 / max|x| in
// fp32 and quants rounded to nearest even, so results do not depend on the path.
using QuantizeRowFn = void (*)(const float* x, int64_t k, int32_t offset, int8_t* qs, float* d,
                               int32_t* corr);

// out[r * m + j] = x[r] · w[j] for every row r of x and weight rows j in [first, last); w points
// at weight row 0, rows w_stride bytes apart.
using QuantizedKernelFn = void (*)(DType dtype, const std::byte* w, size_t w_stride, int64_t first,
                                   int64_t last, const QuantizedRows& x, float* out, int64_t m);

namespace avx512 {
void quantize_row(const float* x, int64_t k, int32_t offset, int8_t* qs, float* d, int32_t* corr);
// Few rows of x: streams each weight row once, several rows at a time (memory-bound decode).
void gemv(DType dtype, const std::byte* w, size_t w_stride, int64_t first, int64_t last,
          const QuantizedRows& x, float* out, int64_t m);
// Many rows of x: packs kGemmPanel weight rows to a transient buffer, then reuses each block
// across all rows of x (compute-bound prefill).
void gemm(DType dtype, const std::byte* w, size_t w_stride, int64_t first, int64_t last,
          const QuantizedRows& x, float* out, int64_t m);
constexpr int64_t kGemmPanel = 32;
// Any rows of x against Q4_0 / Q8_0 weights repacked into panels (matmul/panel_weights.h):
// out[r * m + j] for panels [first, last), that is weight rows [32 * first, min(m, 32 * last)).
void panel_matmul(DType dtype, const std::byte* panels, int64_t first, int64_t last,
                  const QuantizedRows& x, float* out, int64_t m);
}  // namespace avx512

namespace avx2 {
void quantize_row(const float* x, int64_t k, int32_t offset, int8_t* qs, float* d, int32_t* corr);
// Any number of rows of x, block by block.
void matmul(DType dtype, const std::byte* w, size_t w_stride, int64_t first, int64_t last,
            const QuantizedRows& x, float* out, int64_t m);
// avx512::panel_matmul's contract, with maddubs in place of VNNI, on the same panels.
void panel_matmul(DType dtype, const std::byte* panels, int64_t first, int64_t last,
                  const QuantizedRows& x, float* out, int64_t m);
}  // namespace avx2

}  // namespace baton::cpu
