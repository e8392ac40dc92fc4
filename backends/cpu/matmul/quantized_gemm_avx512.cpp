// AVX-512 VNNI: the prefill GEMM over Q8_0 and the Q4 / Q5 weights and Baton's int8 / int4
// weights.
//
// Prefill is bound by arithmetic, so each weight block should feed many rows of x. A panel of
// kGemmPanel weight rows is packed to a transient, thread-local buffer (the weights themselves
// stay in place): per block, 8 groups of 4 unsigned quants, each group as 32 rows x 4 bytes in
// two zmm. One vpdpbusd then multiplies 16 weight rows by 4 broadcast bytes of one x row, and
// lanes are output columns, so no horizontal sums are needed. A tile of kR x rows x 32 columns
// keeps its int32 block dots and fp32 sums in registers.

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/matmul/quantized.h"
#include "backends/cpu/matmul/tile_avx512.h"

namespace baton::cpu::avx512 {
namespace {

constexpr int kR = 6;  // x rows per tile: 2 * kR int32 and 2 * kR fp32 accumulators fit in zmm
constexpr int kGroups = kQuantBlock / 4;  // vpdpbusd steps per block
static_assert(kGemmPanel == 32, "the tile holds two zmm of 16 columns");

// Columns 0..15 and 16..31 of the panel.
struct QuantPair {
  __m512i lo, hi;
};
struct ScalePair {
  __m512 lo, hi;
};
struct Panel {
  std::vector<QuantPair> q;  // per block, kGroups of 4 unsigned quants per column
  std::vector<ScalePair> d;  // per block, the weight scales
  std::vector<ScalePair> m;  // per block, Q4_1 / Q5_1's minimums (zero for the other types)
};

// Block b (32 elements) of the weight row at `row` as unsigned quants, their scale and minimum.
// Q4_0 and int4 nibbles are w + 8, Q5_0 codes w + 16; Q8_0 and int8 quants are stored as
// w + 128; x's corr cancels the offset. Q4_1 / Q5_1 codes are q of d * q + m.
template <DType kType>
[[gnu::always_inline]] inline __m256i unsigned_block(const std::byte* row, int64_t b, float& scale,
                                                     float& minimum) {
  minimum = 0.0f;
  if constexpr (is_legacy_block(kType)) {
    const auto* block = reinterpret_cast<const LegacyBlock<kType>*>(row) + b;
    const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block->qs));
    scale = _cvtsh_ss(block->d);
    if constexpr (has_block_minimum(kType)) minimum = _cvtsh_ss(block->m);
    __m256i codes =
        _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(qs, 4), qs), _mm256_set1_epi8(0x0f));
    if constexpr (has_fifth_bit(kType)) {
      uint32_t high = 0;  // bit i: the fifth bit of element i
      std::memcpy(&high, block->qh, sizeof(high));
      codes = _mm256_mask_add_epi8(codes, high, codes, _mm256_set1_epi8(16));
    }
    return codes;
  } else if constexpr (kType == DType::kQ8_0) {
    const auto* block = reinterpret_cast<const BlockQ8_0*>(row) + b;
    scale = _cvtsh_ss(block->d);
    return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block->qs)),
                            _mm256_set1_epi8(static_cast<char>(0x80)));
  } else if constexpr (kType == DType::kI8Row) {
    std::memcpy(&scale, row, sizeof(scale));
    const std::byte* qs = row + sizeof(float) + b * kQuantBlock;
    return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)),
                            _mm256_set1_epi8(static_cast<char>(0x80)));
  } else {
    const Int4Place place = int4_place(kType, row, b);
    scale = _cvtsh_ss(*place.scale);
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(place.chunk));
    return _mm256_and_si256(place.high ? _mm256_srli_epi16(q, 4) : q, _mm256_set1_epi8(0x0f));
  }
}

// Packs weight rows [0, rows) of the panel; missing rows read as zero quants and scales.
template <DType kType>
void pack_panel(const std::byte* w, size_t w_stride, int rows, int64_t nb, Panel& panel) {
  for (int64_t b = 0; b < nb; ++b) {
    alignas(64) uint32_t quants[kGemmPanel][kGroups];
    alignas(64) float scales[kGemmPanel], minimums[kGemmPanel];
    for (int j = 0; j < kGemmPanel; ++j) {
      __m256i u = _mm256_setzero_si256();
      scales[j] = minimums[j] = 0.0f;
      if (j < rows) {
        u = unsigned_block<kType>(w + static_cast<size_t>(j) * w_stride, b, scales[j], minimums[j]);
      }
      _mm256_store_si256(reinterpret_cast<__m256i*>(quants[j]), u);
    }
    auto* dst = reinterpret_cast<uint32_t*>(panel.q.data() + b * kGroups);
    for (int g = 0; g < kGroups; ++g) {
      for (int j = 0; j < kGemmPanel; ++j) dst[g * kGemmPanel + j] = quants[j][g];
    }
    panel.d[b] = {_mm512_load_ps(scales), _mm512_load_ps(scales + 16)};
    panel.m[b] = {_mm512_load_ps(minimums), _mm512_load_ps(minimums + 16)};
  }
}

// out[(r0 + r) * m + j0 + c] for r < kRows, c < cols. With kMinimum (Q4_1 / Q5_1) x's corr is
// the sum of its quants, which scales the weights' minimums instead of entering the dot.
template <int kRows, bool kMinimum>
void gemm_tile(const QuantizedRows& x, int64_t r0, const Panel& panel, float* out, int64_t m,
               int64_t j0, int cols) {
  const int64_t nb = x.blocks, k = x.k;
  const int8_t* xq = x.qs_row(r0);
  const float* xd = x.d_row(r0);
  const int32_t* xc = x.corr_row(r0);
  __m512 acc[kRows][2];
  for (auto& row : acc) row[0] = row[1] = _mm512_setzero_ps();

  for (int64_t b = 0; b < nb; ++b) {
    __m512i dot[kRows][2];
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      dot[r][0] = dot[r][1] = _mm512_set1_epi32(kMinimum ? 0 : xc[r * nb + b]);
    }
    const QuantPair* q = panel.q.data() + b * kGroups;
#pragma GCC unroll 8
    for (int g = 0; g < kGroups; ++g) {
      const __m512i w0 = q[g].lo, w1 = q[g].hi;
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        int32_t four;
        std::memcpy(&four, xq + r * k + b * kQuantBlock + 4 * g, sizeof(four));
        const __m512i xv = _mm512_set1_epi32(four);
        dot[r][0] = _mm512_dpbusd_epi32(dot[r][0], w0, xv);
        dot[r][1] = _mm512_dpbusd_epi32(dot[r][1], w1, xv);
      }
    }
    const __m512 d0 = panel.d[b].lo, d1 = panel.d[b].hi;
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m512 dx = _mm512_set1_ps(xd[r * nb + b]);
      acc[r][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][0]), _mm512_mul_ps(d0, dx), acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][1]), _mm512_mul_ps(d1, dx), acc[r][1]);
      if constexpr (kMinimum) {
        const __m512 sum = _mm512_mul_ps(dx, _mm512_set1_ps(static_cast<float>(xc[r * nb + b])));
        acc[r][0] = _mm512_fmadd_ps(panel.m[b].lo, sum, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(panel.m[b].hi, sum, acc[r][1]);
      }
    }
  }
  store_tile<kRows>(acc, out, m, r0, j0, cols);
}

template <int kRows, bool kMinimum>
void gemm_tail(int rows, const QuantizedRows& x, int64_t r0, const Panel& panel, float* out,
               int64_t m, int64_t j0, int cols) {
  if constexpr (kRows > 0) {
    if (rows == kRows) return gemm_tile<kRows, kMinimum>(x, r0, panel, out, m, j0, cols);
    gemm_tail<kRows - 1, kMinimum>(rows, x, r0, panel, out, m, j0, cols);
  }
}

template <bool kMinimum>
void gemm_rows(const QuantizedRows& x, const Panel& panel, float* out, int64_t m, int64_t j0,
               int cols) {
  int64_t r0 = 0;
  for (; r0 + kR <= x.n; r0 += kR) gemm_tile<kR, kMinimum>(x, r0, panel, out, m, j0, cols);
  if (r0 < x.n) {
    gemm_tail<kR - 1, kMinimum>(static_cast<int>(x.n - r0), x, r0, panel, out, m, j0, cols);
  }
}

}  // namespace

void gemm(DType dtype, const std::byte* w, size_t w_stride, int64_t first, int64_t last,
          const QuantizedRows& x, float* out, int64_t m) {
  thread_local Panel panel;
  const int64_t nb = x.blocks;
  if (panel.q.size() < static_cast<size_t>(nb * kGroups)) {
    panel.q.resize(nb * kGroups);
    panel.d.resize(nb);
    panel.m.resize(nb);
  }
  for (int64_t j0 = first; j0 < last; j0 += kGemmPanel) {
    const int cols = static_cast<int>(std::min<int64_t>(kGemmPanel, last - j0));
    const std::byte* wj = w + static_cast<size_t>(j0) * w_stride;
    with_quantized_type(dtype,
                        [&](auto type) { pack_panel<type()>(wj, w_stride, cols, nb, panel); });
    if (has_block_minimum(dtype)) {
      gemm_rows<true>(x, panel, out, m, j0, cols);
    } else {
      gemm_rows<false>(x, panel, out, m, j0, cols);
    }
  }
}

}  // namespace baton::cpu::avx512
